import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { UpdatePreferencesRequestSchema, UpdatePreferencesResponseSchema } from '@/gen/fairplay/v1/auth_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';
import { userQueryKey } from '@/lib/auth';

export type PreferencesInput = ApiRequest<typeof UpdatePreferencesRequestSchema>;
export type PreferencesResult = ApiJson<typeof UpdatePreferencesResponseSchema>;

/** updatePreferences changes the given preferences; others stay as they are (POST /api/auth/preferences). */
export function updatePreferences(input: PreferencesInput): Promise<PreferencesResult> {
  return apiRequest<PreferencesResult>('/auth/preferences', { method: 'POST', body: input });
}

/** useUpdatePreferences saves preferences; the answer is the user, which replaces the signed-in user. */
export function useUpdatePreferences() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: updatePreferences,
    onSuccess: (res) => {
      queryClient.setQueryData(userQueryKey, res.user);
    },
  });
}
