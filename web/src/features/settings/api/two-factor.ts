import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type {
  DisableTwoFactorRequestSchema,
  DisableTwoFactorResponseSchema,
  EnableTwoFactorRequestSchema,
  EnableTwoFactorResponseSchema,
  GetTwoFactorResponseSchema,
  SetupTwoFactorResponseSchema,
} from '@/gen/fairplay/v1/auth_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';
import { userQueryKey } from '@/lib/auth';

export type TwoFactorState = ApiJson<typeof GetTwoFactorResponseSchema>;
export type TwoFactorSetup = ApiJson<typeof SetupTwoFactorResponseSchema>;
type EnableResult = ApiJson<typeof EnableTwoFactorResponseSchema>;
type DisableResult = ApiJson<typeof DisableTwoFactorResponseSchema>;

const twoFactorKey = ['account', 'two-factor'];

/** The signed-in user's two-factor state (GET /api/auth/2fa). */
export const twoFactorQueryOptions = () =>
  queryOptions({
    queryKey: twoFactorKey,
    queryFn: () => apiRequest<TwoFactorState>('/auth/2fa'),
    retry: false,
  });

export function useTwoFactor() {
  return useQuery(twoFactorQueryOptions());
}

/** useSetupTwoFactor asks for a new key (POST /api/auth/2fa/setup); it stays pending until enabled. */
export function useSetupTwoFactor() {
  return useMutation({
    mutationFn: () => apiRequest<TwoFactorSetup>('/auth/2fa/setup', { method: 'POST', body: {} }),
  });
}

/** useEnableTwoFactor confirms the key with a code; the answer's recovery codes are shown once. */
export function useEnableTwoFactor() {
  const queryClient = useQueryClient();
  return useMutation({
    gcTime: 0, // its variables hold the password: gone once nothing observes it (the form resets it)
    mutationFn: (input: ApiRequest<typeof EnableTwoFactorRequestSchema>) =>
      apiRequest<EnableResult>('/auth/2fa/enable', { method: 'POST', body: input }),
    onSuccess: (res) => {
      queryClient.setQueryData(userQueryKey, res.user);
      void queryClient.invalidateQueries({ queryKey: twoFactorKey });
    },
  });
}

/** useDisableTwoFactor turns two-factor sign-in off with the password and a code. */
export function useDisableTwoFactor() {
  const queryClient = useQueryClient();
  return useMutation({
    gcTime: 0, // its variables hold the password: gone once nothing observes it (the form resets it)
    mutationFn: (input: ApiRequest<typeof DisableTwoFactorRequestSchema>) =>
      apiRequest<DisableResult>('/auth/2fa/disable', { method: 'POST', body: input }),
    onSuccess: (res) => {
      queryClient.setQueryData(userQueryKey, res.user);
      void queryClient.invalidateQueries({ queryKey: twoFactorKey });
    },
  });
}
