import { KENO_MAX_PICKS, KENO_NUMBERS, kenoPayouts, type KenoRisk } from '@/config/keno-payouts';

// Keno's selection, reveal timing and payout table (SPEC.md §2, §5, §9).

/**
 * The drawn numbers are revealed one at a time, in draw order: each flips for 300 ms,
 * and the next starts 80 ms after it has landed (SPEC.md §4, §9).
 */
export const KENO_REVEAL_MS = 300;
export const KENO_STAGGER_MS = 80;

/** revealDelay is when the i-th drawn number (from 0) starts to flip, after the draw arrives. */
export function revealDelay(index: number): number {
  return index * (KENO_REVEAL_MS + KENO_STAGGER_MS);
}

/** revealDuration is how long the reveal of count numbers takes: the last one's delay plus its flip. */
export function revealDuration(count: number): number {
  return count > 0 ? revealDelay(count - 1) + KENO_REVEAL_MS : 0;
}

/** togglePick adds a number (while fewer than 10 are picked) or takes it off the selection. */
export function togglePick(picks: readonly number[], n: number): number[] {
  if (picks.includes(n)) return picks.filter((p) => p !== n);
  if (n < 1 || n > KENO_NUMBERS || picks.length >= KENO_MAX_PICKS) return [...picks];
  return [...picks, n];
}

/** autoPick picks count distinct random numbers from 1 … 40 (10 when count is 0), ascending. */
export function autoPick(count: number, random: () => number = Math.random): number[] {
  const want = Math.min(KENO_MAX_PICKS, count > 0 ? count : KENO_MAX_PICKS);
  const pool = Array.from({ length: KENO_NUMBERS }, (_, i) => i + 1);
  const picked: number[] = [];
  for (let i = 0; i < want; i++) {
    const [n] = pool.splice(Math.floor(random() * pool.length), 1);
    if (n !== undefined) picked.push(n);
  }
  return picked.sort((a, b) => a - b);
}

/** formatPayout is a payout-table cell: a dash for 0, else the multiplier with 2 decimals and an x. */
export function formatPayout(multiplier: number): string {
  return multiplier === 0 ? '-' : `${multiplier.toFixed(2)}x`;
}

export interface PayoutRow {
  picks: number;
  /** cells holds hits 0 … 10; null past the pick count. */
  cells: (string | null)[];
}

/** payoutRows is the Payout Table of a risk level: rows for 1 … 10 picks, columns for 0 … 10 hits. */
export function payoutRows(risk: KenoRisk): PayoutRow[] {
  return Array.from({ length: KENO_MAX_PICKS }, (_, i) => {
    const picks = i + 1;
    const table = kenoPayouts(risk, picks);
    const cells = Array.from({ length: KENO_MAX_PICKS + 1 }, (_, hits) => {
      const m = table[hits];
      return m === undefined ? null : formatPayout(m);
    });
    return { picks, cells };
  });
}
