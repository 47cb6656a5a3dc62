import { useSyncExternalStore } from 'react';
import type { GameSlug } from '@/config/games';
import { revealsSnapshot, subscribeReveals, type Reveal } from '@/lib/reveals';

// The Live stats of each game since the page opened: a running sum of every
// reveal (lib/reveals keeps only the latest 200, a long session has more).
// Money is summed in whole cents, so a thousand bets add up exactly.

/** MAX_POINTS bounds the profit chart: past it, every other point is dropped. */
export const MAX_POINTS = 500;

/** SessionStats is one game's figures since the page opened (or the last reset). */
export interface SessionStats {
  /** wagered is the sum of stakes. */
  wagered: number;
  /** profit is payouts minus stakes. */
  profit: number;
  /** wins counts bets that paid more than their stake; losses those that paid less (a push is neither). */
  wins: number;
  losses: number;
  /** points is the running profit after each bet, starting at 0 (thinned past MAX_POINTS). */
  points: readonly number[];
}

interface Tally {
  wageredCents: number;
  profitCents: number;
  wins: number;
  losses: number;
  points: number[];
  snapshot: SessionStats;
}

const EMPTY: SessionStats = { wagered: 0, profit: 0, wins: 0, losses: 0, points: [0] };

const cents = (value: number) => Math.round(value * 100);

const tallies = new Map<GameSlug, Tally>();
const listeners = new Set<() => void>();
let lastSeen: Reveal | undefined;

function newTally(): Tally {
  return { wageredCents: 0, profitCents: 0, wins: 0, losses: 0, points: [0], snapshot: EMPTY };
}

function count(r: Reveal) {
  const t = tallies.get(r.game) ?? newTally();
  const stake = cents(r.amount);
  const paid = cents(r.payout);
  t.wageredCents += stake;
  t.profitCents += paid - stake;
  if (paid > stake) t.wins++;
  else if (paid < stake) t.losses++;
  t.points.push(t.profitCents / 100);
  if (t.points.length > MAX_POINTS) t.points = t.points.filter((_, i) => i % 2 === 0 || i === t.points.length - 1);
  t.snapshot = {
    wagered: t.wageredCents / 100,
    profit: t.profitCents / 100,
    wins: t.wins,
    losses: t.losses,
    points: [...t.points],
  };
  tallies.set(r.game, t);
}

/** sync counts the reveals that arrived since the last call (they are newest first, the last seen marks the end). */
function sync() {
  const all = revealsSnapshot();
  const fresh: Reveal[] = [];
  for (const r of all) {
    if (r === lastSeen) break;
    fresh.push(r);
  }
  if (fresh.length === 0) return;
  // All gone: the reveals were reset (sign-out), so the session starts again.
  if (lastSeen !== undefined && fresh.length === all.length) tallies.clear();
  lastSeen = all[0];
  for (const r of fresh.reverse()) count(r);
  for (const l of listeners) l();
}

sync();
subscribeReveals(() => {
  if (revealsSnapshot().length === 0 && lastSeen !== undefined) {
    lastSeen = undefined;
    tallies.clear();
    for (const l of listeners) l();
    return;
  }
  sync();
});

/** resetSessionStats starts a game's figures again from now. */
export function resetSessionStats(game: GameSlug): void {
  tallies.delete(game);
  for (const l of listeners) l();
}

/** sessionStats is a game's figures since the page opened or the last reset. */
export function sessionStats(game: GameSlug): SessionStats {
  return tallies.get(game)?.snapshot ?? EMPTY;
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/** useSessionStats follows a game's figures as its results are revealed. */
export function useSessionStats(game: GameSlug): SessionStats {
  return useSyncExternalStore(
    subscribe,
    () => sessionStats(game),
    () => sessionStats(game),
  );
}
