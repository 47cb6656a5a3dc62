import { infiniteQueryOptions, keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import type { GameSlug } from '@/config/games';
import type { ListBetsResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson } from '@/lib/api-types';

// The player's bet history (GET /api/games/bets): the Fairness panel pages
// through it, the My Bets page scrolls through it, and the recent results strip
// and the live table's "My bets" tab start from its first page.

export type BetPage = ApiJson<typeof ListBetsResponseSchema>;
export type Bet = BetPage['bets'][number];

/** betsKey prefixes every bet-history query, so a seed rotation (which reveals seeds) can refresh them all. */
export const betsKey = ['bets'] as const;

export const BETS_PAGE_SIZE = 10;

export interface BetsQuery {
  /** page counts from 1. */
  page: number;
  /** limit is the page size (1 to 100). */
  limit?: number;
  /** game keeps only one game's bets; left out, every game. */
  game?: GameSlug;
}

/** getBets reads one page of the player's bets, newest first (GET /api/games/bets?page=&limit=&game=). */
export function getBets({ page, limit = BETS_PAGE_SIZE, game }: BetsQuery): Promise<BetPage> {
  const params = new URLSearchParams({ page: String(page), limit: String(limit) });
  if (game) params.set('game', game);
  return apiRequest<BetPage>(`/games/bets?${params.toString()}`);
}

/** betsQueryOptions is one page of the history (the Fairness panel's pager). */
export const betsQueryOptions = (page: number) =>
  queryOptions({
    queryKey: [...betsKey, 'page', { page }],
    queryFn: () => getBets({ page }),
    staleTime: 0,
    placeholderData: keepPreviousData,
  });

export function useBets(page: number) {
  return useQuery(betsQueryOptions(page));
}

/** HISTORY_PAGE_SIZE is the My Bets page's batch: a screenful on a desktop. */
export const HISTORY_PAGE_SIZE = 20;

/** betHistoryQueryOptions scrolls through the history, one game's or every game's (the My Bets page). */
export const betHistoryQueryOptions = (game: GameSlug | undefined) =>
  infiniteQueryOptions({
    queryKey: [...betsKey, 'history', { game: game ?? 'all' }],
    queryFn: ({ pageParam }) => getBets({ page: pageParam, limit: HISTORY_PAGE_SIZE, game }),
    initialPageParam: 1,
    getNextPageParam: (last) => (last.page < last.totalPages ? last.page + 1 : undefined),
    staleTime: 0,
  });

/** RECENT_COUNT is how many outcomes the recent results strip and the "My bets" tab show. */
export const RECENT_COUNT = 10;

/**
 * recentBetsQueryOptions is the newest page of the history, read once per screen: it seeds
 * the recent results and the "My bets" tab, which then grow only from reveals. Reading it
 * again later could bring a bet whose result the animation has not shown yet, so it is
 * never refetched on its own (no staleness, no refetch on focus).
 */
export const recentBetsQueryOptions = (game: GameSlug | undefined, limit = RECENT_COUNT) =>
  queryOptions({
    queryKey: [...betsKey, 'recent', { game: game ?? 'all', limit }],
    queryFn: () => getBets({ page: 1, limit, game }),
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    refetchOnReconnect: false,
  });

/** useRecentBets is the newest settled bets of the history (of one game, or all), read once per screen. */
export function useRecentBets(game: GameSlug | undefined, { enabled }: { enabled: boolean }, limit = RECENT_COUNT) {
  return useQuery({ ...recentBetsQueryOptions(game, limit), enabled });
}
