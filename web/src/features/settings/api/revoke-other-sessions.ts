import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { RevokeOtherSessionsRequestSchema, RevokeOtherSessionsResponseSchema } from '@/gen/fairplay/v1/auth_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';
import { getRefreshToken } from '@/lib/tokens';
import { sessionsQueryOptions } from './get-sessions';

export function revokeOtherSessions(body: ApiRequest<typeof RevokeOtherSessionsRequestSchema>) {
  return apiRequest<ApiJson<typeof RevokeOtherSessionsResponseSchema>>('/auth/revoke-other-sessions', {
    method: 'POST',
    body,
  });
}

/** useRevokeOtherSessions keeps this browser's session and ends the rest, then reloads the list. */
export function useRevokeOtherSessions() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => revokeOtherSessions({ currentRefreshToken: getRefreshToken() ?? '' }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: sessionsQueryOptions().queryKey }),
  });
}
