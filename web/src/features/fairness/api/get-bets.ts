import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import type { ListBetsResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson } from '@/lib/api-types';
import { fairnessKey } from './get-seeds';

export type BetPage = ApiJson<typeof ListBetsResponseSchema>;
export type Bet = BetPage['bets'][number];

export const BETS_PAGE_SIZE = 10;

/** getBets reads one page of the player's bets, newest first (GET /api/games/bets?page=&limit=). */
export function getBets(page: number): Promise<BetPage> {
  const params = new URLSearchParams({ page: String(page), limit: String(BETS_PAGE_SIZE) });
  return apiRequest<BetPage>(`/games/bets?${params.toString()}`);
}

export const betsQueryOptions = (page: number) =>
  queryOptions({
    queryKey: [...fairnessKey, 'bets', { page }],
    queryFn: () => getBets(page),
    staleTime: 0,
    placeholderData: keepPreviousData,
  });

export function useBets(page: number) {
  return useQuery(betsQueryOptions(page));
}
