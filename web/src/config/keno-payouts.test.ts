import { KENO_DRAWN, KENO_MAX_PICKS, KENO_NUMBERS, KENO_PAYOUTS, KENO_RISKS, kenoPayouts } from './keno-payouts';

/** hitProbability is C(picks, hits)·C(40 − picks, 10 − hits)/C(40, 10). */
function hitProbability(picks: number, hits: number): number {
  const c = (n: number, k: number): number => {
    if (k < 0 || k > n) return 0;
    let r = 1;
    for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
    return r;
  };
  return (c(picks, hits) * c(KENO_NUMBERS - picks, KENO_DRAWN - hits)) / c(KENO_NUMBERS, KENO_DRAWN);
}

describe('keno payout tables', () => {
  it('has the 40 tables, each for 0 … picks hits', () => {
    let tables = 0;
    for (const risk of KENO_RISKS) {
      expect(Object.keys(KENO_PAYOUTS[risk])).toHaveLength(KENO_MAX_PICKS);
      for (let picks = 1; picks <= KENO_MAX_PICKS; picks++) {
        expect(kenoPayouts(risk, picks)).toHaveLength(picks + 1);
        tables++;
      }
    }
    expect(tables).toBe(40);
  });

  it('matches the facts of SPEC.md §3', () => {
    expect(kenoPayouts('classic', 1)).toEqual([0, 3.96]);
    expect(kenoPayouts('classic', 10).at(-1)).toBe(100);
    expect(kenoPayouts('low', 9).at(-1)).toBe(1000);
    expect(kenoPayouts('low', 10).at(-1)).toBe(1000);
    expect(kenoPayouts('medium', 10).at(-1)).toBe(1000);
    expect(kenoPayouts('high', 10).at(-1)).toBe(1000);
    // High pays nothing below 3 to 5 hits depending on the pick count.
    expect(kenoPayouts('high', 4).slice(0, 3)).toEqual([0, 0, 0]);
    expect(kenoPayouts('high', 10).slice(0, 4)).toEqual([0, 0, 0, 0]);
    expect(kenoPayouts('medium', 3)).toEqual([0, 0, 2.8, 50]);
  });

  it('returns about 99% on every table', () => {
    for (const risk of KENO_RISKS) {
      for (let picks = 1; picks <= KENO_MAX_PICKS; picks++) {
        const rtp = kenoPayouts(risk, picks).reduce((sum, m, hits) => sum + m * hitProbability(picks, hits), 0);
        expect(rtp).toBeGreaterThan(0.98);
        expect(rtp).toBeLessThan(0.995);
      }
    }
  });

  it('rejects pick counts outside 1 … 10', () => {
    expect(() => kenoPayouts('classic', 0)).toThrow(RangeError);
    expect(() => kenoPayouts('classic', 11)).toThrow(RangeError);
  });
});
