import { queryOptions, useQuery } from '@tanstack/react-query';
import type { GetConfigResponseSchema } from '@/gen/fairplay/v1/auth_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson } from '@/lib/api-types';

/** AuthConfig tells the client how to render the bot check (GET /api/auth/config). */
export type AuthConfig = ApiJson<typeof GetConfigResponseSchema>;

export function getAuthConfig(): Promise<AuthConfig> {
  return apiRequest<AuthConfig>('/auth/config');
}

export const authConfigQueryOptions = () =>
  queryOptions({ queryKey: ['auth', 'config'], queryFn: getAuthConfig, staleTime: Infinity });

export function useAuthConfig() {
  return useQuery(authConfigQueryOptions());
}
