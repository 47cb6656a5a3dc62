// The Plinko ball's path (SPEC.md §4): the server's decisions (0 left, 1 right, one per
// row) walked through the pins, ending in the bucket the server paid.
//
// Board geometry, in pin spacings from the board's centre line: pin row r (0 … rows − 1)
// holds r + 3 pins at x = j − (r + 2)/2; bucket k (0 … rows) sits at x = k − rows/2. A ball
// on row r has gone right s times in the r rows above, so it touches the pin at
// x = s − r/2; after the last row it drops into bucket s.

/** PATH_POINT_MS is the time the ball takes per path point. */
export const PATH_POINT_MS = 150;

export interface PathPoint {
  /** x is the offset from the centre line in pin spacings. */
  x: number;
  /** y is the row: −1 above the board, 0 … rows − 1 on a pin row, rows in the bucket. */
  y: number;
}

/**
 * normalizeDecisions returns one decision per row whose rights add up to finalBucket,
 * so the animation always ends where the server paid: missing rows go left, and if the
 * count disagrees, the last decisions are flipped until it matches.
 */
export function normalizeDecisions(decisions: readonly number[], finalBucket: number, rows: number): number[] {
  const bucket = Math.min(rows, Math.max(0, Math.round(finalBucket)));
  const out = Array.from({ length: rows }, (_, i) => (decisions[i] === 1 ? 1 : 0));
  let rights = out.reduce<number>((sum, d) => sum + d, 0);
  for (let i = rows - 1; i >= 0 && rights !== bucket; i--) {
    if (rights > bucket && out[i] === 1) {
      out[i] = 0;
      rights--;
    } else if (rights < bucket && out[i] === 0) {
      out[i] = 1;
      rights++;
    }
  }
  return out;
}

/** pathFromDecisions lists the ball's points: above the board, on each pin row, then in finalBucket. */
export function pathFromDecisions(decisions: readonly number[], finalBucket: number, rows: number): PathPoint[] {
  const steps = normalizeDecisions(decisions, finalBucket, rows);
  const points: PathPoint[] = [{ x: 0, y: -1 }];
  let rights = 0;
  for (let row = 0; row < rows; row++) {
    points.push({ x: rights - row / 2, y: row });
    rights += steps[row] ?? 0;
  }
  points.push({ x: rights - rows / 2, y: rows });
  return points;
}

/** pathDuration is how long a path's animation runs: 150 ms per point after the first. */
export function pathDuration(points: readonly PathPoint[]): number {
  return Math.max(0, points.length - 1) * PATH_POINT_MS;
}

/**
 * pointAt is the ball's position elapsed ms into its path: straight across between pins
 * and falling with a small hop after each bounce. It clamps to the path's ends.
 */
export function pointAt(points: readonly PathPoint[], elapsed: number): PathPoint {
  const last = points[points.length - 1] ?? { x: 0, y: 0 };
  if (points.length < 2 || elapsed >= pathDuration(points)) return last;
  const t = Math.max(0, elapsed) / PATH_POINT_MS;
  const i = Math.floor(t);
  const f = t - i;
  const a = points[i] ?? last;
  const b = points[i + 1] ?? last;
  return { x: a.x + (b.x - a.x) * f, y: a.y + (b.y - a.y) * f * f - (i > 0 ? 0.35 * Math.sin(Math.PI * f) : 0) };
}

/** formatBucket labels a payout bucket: values of 1000 or more in thousands with a k (1000 → "1k"). */
export function formatBucket(multiplier: number): string {
  return multiplier >= 1000 ? `${multiplier / 1000}k` : String(multiplier);
}
