import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { RevokeOtherSessionsRequestSchema, RevokeOtherSessionsResponseSchema } from '@/gen/fairplay/v1/auth_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';
import { sessionsQueryOptions } from './get-sessions';

/**
 * revokeOtherSessions ends every session of the player but this tab's, which
 * it names by its refresh token: the current one when the request is sent
 * (refresh tokens rotate, and a retired one would end this session instead).
 */
export function revokeOtherSessions() {
  return apiRequest<ApiJson<typeof RevokeOtherSessionsResponseSchema>>('/auth/revoke-other-sessions', {
    method: 'POST',
    refreshTokenBody: (currentRefreshToken): ApiRequest<typeof RevokeOtherSessionsRequestSchema> => ({
      currentRefreshToken,
    }),
  });
}

/** useRevokeOtherSessions keeps this tab's session and ends the rest, then reloads the list. */
export function useRevokeOtherSessions() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: revokeOtherSessions,
    onSettled: () => queryClient.invalidateQueries({ queryKey: sessionsQueryOptions().queryKey }),
  });
}
