import { GAMES, type GameSlug } from '@/config/games';
import type { Reveal } from '@/lib/reveals';
import type { Bet } from './get-bets';

/** Outcome is one settled bet of the player's, as the recent results and the "My bets" tab show it. */
export interface Outcome {
  betId: string;
  game: GameSlug;
  amount: number;
  multiplier: number;
  payout: number;
  /** at is when it settled (or was revealed), in ms since the epoch. */
  at: number;
}

/** isWin tells a winning outcome (paid more than staked) from a loss or a push. */
export function isWin(o: Pick<Outcome, 'amount' | 'payout'>): boolean {
  return o.payout > o.amount;
}

function isGame(value: string): value is GameSlug {
  return GAMES.some((g) => g.slug === value);
}

/**
 * recentOutcomes merges the reveals since the page opened with the history read when the
 * screen opened, newest first, without duplicates, at most limit of them. A history bet
 * still running or still held (its animation has not shown it) is left out, so the list
 * never shows a result before the game does.
 */
export function recentOutcomes(
  reveals: readonly Reveal[],
  history: readonly Bet[],
  { limit, game, held }: { limit: number; game?: GameSlug; held: (betId: string) => boolean },
): Outcome[] {
  const seen = new Set<string>();
  const out: Outcome[] = [];
  for (const r of reveals) {
    if ((game && r.game !== game) || seen.has(r.betId)) continue;
    seen.add(r.betId);
    out.push({ betId: r.betId, game: r.game, amount: r.amount, multiplier: r.multiplier, payout: r.payout, at: r.at });
  }
  // Reveals are newer than anything the history held when it was read; the history follows.
  for (const b of history) {
    if (b.status === 'active' || !isGame(b.game) || (game && b.game !== game)) continue;
    if (seen.has(b._id) || held(b._id)) continue;
    seen.add(b._id);
    const at = new Date(b.createdAt).getTime();
    out.push({
      betId: b._id,
      game: b.game,
      amount: b.amount,
      multiplier: b.multiplier,
      payout: b.payout,
      at: Number.isNaN(at) ? 0 : at,
    });
  }
  return out.slice(0, limit);
}
