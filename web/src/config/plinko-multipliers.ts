// Plinko payout tables (SPEC.md §3), generated from games.json into game-tables.ts:
// PLINKO_MULTIPLIERS[risk][rows] holds the multipliers of buckets 0 … rows, left to
// right (a bucket is the number of rightward bounces). The server pays from its own
// copy (tested against the same games.json); the board shows these, and the fairness
// verifier recomputes with them.
import { PLINKO_MULTIPLIERS, type PlinkoRisk } from './game-tables';

export { PLINKO_MAX_ROWS, PLINKO_MIN_ROWS, PLINKO_MULTIPLIERS, PLINKO_RISKS, type PlinkoRisk } from './game-tables';

/** plinkoMultipliers returns the bucket multipliers for a risk level and 8 … 16 rows. */
export function plinkoMultipliers(risk: PlinkoRisk, rows: number): readonly number[] {
  const table = PLINKO_MULTIPLIERS[risk][rows];
  if (!table) throw new RangeError(`no plinko table for ${risk} risk and ${rows} rows`);
  return table;
}
