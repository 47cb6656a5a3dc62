import { queryOptions, useQuery } from '@tanstack/react-query';
import type { ListSessionsResponseSchema } from '@/gen/fairplay/v1/auth_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson } from '@/lib/api-types';

type ListSessionsResponse = ApiJson<typeof ListSessionsResponseSchema>;
export type Session = ListSessionsResponse['sessions'][number];

export async function getSessions(): Promise<Session[]> {
  const res = await apiRequest<ListSessionsResponse>('/auth/sessions');
  return res.sessions;
}

export const sessionsQueryOptions = () =>
  queryOptions({ queryKey: ['account', 'sessions'], queryFn: getSessions, retry: false });

export function useSessions() {
  return useQuery(sessionsQueryOptions());
}
