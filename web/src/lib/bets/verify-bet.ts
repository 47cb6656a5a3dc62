import { queryOptions, useQuery } from '@tanstack/react-query';
import type { VerifyBetResponseSchema } from '@/gen/fairplay/v1/fairness_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson } from '@/lib/api-types';
import { betsKey } from './get-bets';

export type BetVerification = ApiJson<typeof VerifyBetResponseSchema>;

/** verifyBet asks the server to recompute a settled bet from its revealed seeds (GET /api/fair/verify/{betId}). */
export function verifyBet(betId: string): Promise<BetVerification> {
  return apiRequest<BetVerification>(`/fair/verify/${encodeURIComponent(betId)}`);
}

export const verifyBetQueryOptions = (betId: string) =>
  queryOptions({ queryKey: [...betsKey, 'verify', betId], queryFn: () => verifyBet(betId) });

export function useVerifyBet(betId: string, { enabled }: { enabled: boolean }) {
  return useQuery({ ...verifyBetQueryOptions(betId), enabled });
}
