import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { RevokeSessionRequestSchema, RevokeSessionResponseSchema } from '@/gen/fairplay/v1/auth_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';
import { sessionsQueryOptions } from './get-sessions';

export function revokeSession(body: ApiRequest<typeof RevokeSessionRequestSchema>) {
  return apiRequest<ApiJson<typeof RevokeSessionResponseSchema>>('/auth/revoke-session', { method: 'POST', body });
}

export function useRevokeSession() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (sessionId: string) => revokeSession({ sessionId }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: sessionsQueryOptions().queryKey }),
  });
}
