import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { RevokeOtherSessionsRequestSchema, RevokeOtherSessionsResponseSchema } from '@/gen/fairplay/v1/auth_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson } from '@/lib/api-types';
import { sessionsQueryOptions } from './get-sessions';

/**
 * revokeOtherSessions ends every session of the player but this browser's,
 * which the server knows by the access token: no refresh token is sent (it is
 * in an HttpOnly cookie, lib/tokens).
 */
export function revokeOtherSessions() {
  const body: ApiJson<typeof RevokeOtherSessionsRequestSchema, 'currentRefreshToken'> = {};
  return apiRequest<ApiJson<typeof RevokeOtherSessionsResponseSchema>>('/auth/revoke-other-sessions', {
    method: 'POST',
    body,
  });
}

/** useRevokeOtherSessions keeps this browser's session and ends the rest, then reloads the list. */
export function useRevokeOtherSessions() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: revokeOtherSessions,
    onSettled: () => queryClient.invalidateQueries({ queryKey: sessionsQueryOptions().queryKey }),
  });
}
