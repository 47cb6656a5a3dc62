import { queryOptions, useQuery } from '@tanstack/react-query';
import type { GetBetResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson } from '@/lib/api-types';
import { betsKey } from './get-bets';

export type BetResponse = ApiJson<typeof GetBetResponseSchema>;

/** getBet reads one of the player's bets with its seeds, params and outcome (GET /api/games/bets/{betId}). */
export function getBet(betId: string): Promise<BetResponse> {
  return apiRequest<BetResponse>(`/games/bets/${encodeURIComponent(betId)}`);
}

export const betQueryOptions = (betId: string) =>
  queryOptions({ queryKey: [...betsKey, 'bet', betId], queryFn: () => getBet(betId), staleTime: 0 });

export function useBet(betId: string) {
  return useQuery(betQueryOptions(betId));
}
