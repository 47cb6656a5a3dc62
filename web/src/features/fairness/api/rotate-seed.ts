import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { RotateSeedRequestSchema, RotateSeedResponseSchema } from '@/gen/fairplay/v1/fairness_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';
import { betsKey } from '@/lib/bets/get-bets';
import { fairnessKey } from './get-seeds';

export type RotateSeedInput = ApiRequest<typeof RotateSeedRequestSchema>;
export type RotateSeedResult = ApiJson<typeof RotateSeedResponseSchema>;

/** rotateSeed reveals the active server seed and starts a new pair (POST /api/fair/rotate). */
export function rotateSeed(input: RotateSeedInput): Promise<RotateSeedResult> {
  return apiRequest<RotateSeedResult>('/fair/rotate', { method: 'POST', body: input });
}

/**
 * useRotateSeed rotates the pair; the old pair's bets become verifiable, so every fairness
 * and bet-history query is refreshed, except the recent results' seed, which is read once
 * and holds no seeds.
 */
export function useRotateSeed() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: rotateSeed,
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: fairnessKey }),
        queryClient.invalidateQueries({ queryKey: betsKey, predicate: (query) => query.queryKey[1] !== 'recent' }),
      ]),
  });
}
