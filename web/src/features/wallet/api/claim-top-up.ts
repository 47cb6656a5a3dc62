import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ClaimTopUpResponseSchema } from '@/gen/fairplay/v1/wallet_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson } from '@/lib/api-types';
import { setUserBalance } from '@/lib/auth';
import { topUpQueryOptions, type TopUp } from './get-top-up';

export type ClaimTopUpResult = ApiJson<typeof ClaimTopUpResponseSchema>;

/** claimTopUp credits the daily top-up (POST /api/wallet/top-up). */
export function claimTopUp(): Promise<ClaimTopUpResult> {
  return apiRequest<ClaimTopUpResult>('/wallet/top-up', { method: 'POST', body: {} });
}

/** useClaimTopUp claims the top-up: the header shows the new balance, and the offer the next claim's time. */
export function useClaimTopUp() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: claimTopUp,
    onSuccess: (res) => {
      setUserBalance(queryClient, res.newBalance);
      queryClient.setQueryData<TopUp>(topUpQueryOptions().queryKey, (old) =>
        old ? { ...old, available: false, nextAt: res.nextAt } : old,
      );
    },
    // A refusal (claimed in another tab, balance changed) means the offer is stale.
    onError: () => queryClient.invalidateQueries({ queryKey: topUpQueryOptions().queryKey }),
  });
}
