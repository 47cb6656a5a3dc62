import {
  PLINKO_MAX_ROWS,
  PLINKO_MIN_ROWS,
  PLINKO_MULTIPLIERS,
  PLINKO_RISKS,
  plinkoMultipliers,
} from './plinko-multipliers';

describe('plinko multiplier tables', () => {
  it('has the 27 tables of rows + 1 symmetric entries', () => {
    let tables = 0;
    for (const risk of PLINKO_RISKS) {
      for (let rows = PLINKO_MIN_ROWS; rows <= PLINKO_MAX_ROWS; rows++) {
        const table = plinkoMultipliers(risk, rows);
        expect(table).toHaveLength(rows + 1);
        expect([...table].reverse()).toEqual(table);
        tables++;
      }
    }
    expect(tables).toBe(27);
    expect(Object.keys(PLINKO_MULTIPLIERS.low)).toHaveLength(9);
  });

  it('matches the examples of SPEC.md §3', () => {
    expect(plinkoMultipliers('medium', 8)).toEqual([13, 3, 1.3, 0.7, 0.4, 0.7, 1.3, 3, 13]);
    expect(plinkoMultipliers('low', 16)).toEqual([
      16, 9, 2, 1.4, 1.4, 1.2, 1.1, 1, 0.5, 1, 1.1, 1.2, 1.4, 1.4, 2, 9, 16,
    ]);
    const high16 = plinkoMultipliers('high', 16);
    expect(high16[0]).toBe(1000);
    expect(high16[16]).toBe(1000);
  });

  it('keeps every table near a 99% return', () => {
    for (const risk of PLINKO_RISKS) {
      for (let rows = PLINKO_MIN_ROWS; rows <= PLINKO_MAX_ROWS; rows++) {
        let binomial = 1;
        let rtp = 0;
        plinkoMultipliers(risk, rows).forEach((m, k) => {
          rtp += (m * binomial) / 2 ** rows;
          binomial = (binomial * (rows - k)) / (k + 1);
        });
        expect(rtp).toBeGreaterThan(0.985);
        expect(rtp).toBeLessThan(0.995);
      }
    }
  });

  it('rejects rows outside 8 … 16', () => {
    expect(() => plinkoMultipliers('low', 7)).toThrow(RangeError);
    expect(() => plinkoMultipliers('high', 17)).toThrow(RangeError);
  });
});
