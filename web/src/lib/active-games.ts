import { queryOptions, useQuery } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import type { BlackjackGameSchema, MinesGameSchema, PumpGameSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from './api-client';
import type { ApiJson } from './api-types';

// GET /api/games/active: the player's running Mines, Pump and Blackjack games, so a
// reloaded page resumes them. Shared by three features, so it lives here.

export type ActiveMinesGame = ApiJson<typeof MinesGameSchema>;
export type ActivePumpGame = ApiJson<typeof PumpGameSchema>;
export type ActiveBlackjackGame = ApiJson<typeof BlackjackGameSchema>;

/** ActiveGames has null for a kind without a running game. */
export interface ActiveGames {
  mines: ActiveMinesGame | null;
  pump: ActivePumpGame | null;
  blackjack: ActiveBlackjackGame | null;
}

export function getActiveGames(): Promise<ActiveGames> {
  return apiRequest<ActiveGames>('/games/active');
}

/** A running game changes with every action, so the answer is never reused: each screen asks afresh. */
export const activeGamesQueryOptions = () =>
  queryOptions({
    queryKey: ['games', 'active'],
    queryFn: getActiveGames,
    staleTime: 0,
    gcTime: 0,
    refetchOnReconnect: false,
  });

export function useActiveGames({ enabled }: { enabled: boolean }) {
  return useQuery({ ...activeGamesQueryOptions(), enabled });
}

/**
 * useResumeGame calls resume once with the running game of one kind, as the server
 * reports it after the screen mounted (never with an answer cached before).
 */
export function useResumeGame<K extends keyof ActiveGames>(
  kind: K,
  enabled: boolean,
  resume: (game: NonNullable<ActiveGames[K]>) => void,
): void {
  const query = useActiveGames({ enabled });
  const data = query.isFetchedAfterMount ? query.data : undefined;
  const resumed = useRef(false);
  const latest = useRef(resume);
  useEffect(() => {
    latest.current = resume;
  });
  useEffect(() => {
    if (resumed.current || !data) return;
    resumed.current = true;
    const game = data[kind];
    if (game) latest.current(game);
  }, [data, kind]);
}
