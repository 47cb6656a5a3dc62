// The payout buckets' colours: yellow in the middle to red at the edges, each
// light enough for the dark label text to meet WCAG AA (4.5:1, colors.test.ts).

/** BUCKET_TEXT is the colour of a bucket's label. */
export const BUCKET_TEXT = '#1b1200';

/** bucketHsl is bucket k's colour on a board of rows rows, as hue, saturation and lightness. */
export function bucketHsl(k: number, rows: number): [number, number, number] {
  const t = Math.abs(k - rows / 2) / (rows / 2);
  // Red is darker to the eye than yellow: the edges get lighter to keep the label readable.
  return [Math.round(48 - 48 * t), 92, Math.round(56 + 6 * t)];
}

/** bucketColor is bucket k's colour as CSS. */
export function bucketColor(k: number, rows: number): string {
  const [h, s, l] = bucketHsl(k, rows);
  return `hsl(${h} ${s}% ${l}%)`;
}
