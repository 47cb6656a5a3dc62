// Keno payout tables (SPEC.md §3), generated from games.json into game-tables.ts:
// KENO_PAYOUTS[risk][picks] holds the multipliers for 0 … picks hits, for 1 … 10 picks.
// The server pays from its own copy (tested against the same games.json); the Payout
// Table shows these, and the fairness verifier recomputes with them.
import { KENO_PAYOUTS, type KenoRisk } from './game-tables';

export { KENO_DRAWN, KENO_MAX_PICKS, KENO_NUMBERS, KENO_PAYOUTS, KENO_RISKS, type KenoRisk } from './game-tables';

/** kenoPayouts returns the multipliers for 0 … picks hits with 1 … 10 picks. */
export function kenoPayouts(risk: KenoRisk, picks: number): readonly number[] {
  const table = KENO_PAYOUTS[risk][picks];
  if (!table) throw new RangeError(`no keno table for ${risk} risk and ${picks} picks`);
  return table;
}
