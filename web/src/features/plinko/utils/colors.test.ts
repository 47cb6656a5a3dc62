import { PLINKO_MAX_ROWS, PLINKO_MIN_ROWS } from '@/config/plinko-multipliers';
import { contrastRatio, hexToRgb, hslToRgb } from '@/lib/contrast';
import { BUCKET_TEXT, bucketHsl } from './colors';

describe('bucket colours', () => {
  it('give every label at least 4.5:1 (WCAG AA) on every board', () => {
    const text = hexToRgb(BUCKET_TEXT);
    let worst = Infinity;
    for (let rows = PLINKO_MIN_ROWS; rows <= PLINKO_MAX_ROWS; rows++) {
      for (let k = 0; k <= rows; k++) {
        const ratio = contrastRatio(text, hslToRgb(...bucketHsl(k, rows)));
        worst = Math.min(worst, ratio);
        expect(ratio, `rows ${rows}, bucket ${k}`).toBeGreaterThanOrEqual(4.5);
      }
    }
    console.log(`plinko buckets: lowest label contrast ${worst.toFixed(2)}:1`);
  });

  it('run from yellow in the middle to red at the edges', () => {
    expect(bucketHsl(8, 16)[0]).toBe(48);
    expect(bucketHsl(0, 16)[0]).toBe(0);
    expect(bucketHsl(16, 16)[0]).toBe(0);
  });
});
