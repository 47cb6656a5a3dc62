import { queryOptions, useQuery } from '@tanstack/react-query';
import type { GetTopUpResponseSchema } from '@/gen/fairplay/v1/wallet_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson } from '@/lib/api-types';

export type TopUp = ApiJson<typeof GetTopUpResponseSchema>;

/** walletKey prefixes the wallet's queries. */
export const walletKey = ['wallet'] as const;

/** getTopUp tells whether the daily top-up can be claimed now, how much it is and below what balance (GET /api/wallet/top-up). */
export function getTopUp(): Promise<TopUp> {
  return apiRequest<TopUp>('/wallet/top-up');
}

export const topUpQueryOptions = () =>
  queryOptions({ queryKey: [...walletKey, 'top-up'], queryFn: getTopUp, staleTime: 60_000 });

export function useTopUp({ enabled }: { enabled: boolean }) {
  return useQuery({ ...topUpQueryOptions(), enabled });
}
