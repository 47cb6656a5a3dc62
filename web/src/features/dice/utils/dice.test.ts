import { clampTarget, diceMultiplier, formatTarget, winChance } from './dice';

describe('diceMultiplier', () => {
  it.each([
    [50, 1.98],
    [40, 2.48],
    [98, 1.01],
    [2, 49.5],
    [49.5, 2],
    [33.3, 2.97],
    [66.6, 1.49],
    [10, 9.9],
  ])('is 99 / %s to 2 decimals, halves up: %s', (target, want) => {
    expect(diceMultiplier(target)).toBe(want);
  });
});

describe('winChance', () => {
  it('equals the target', () => {
    expect(winChance(50)).toBe(50);
    expect(winChance(12.3)).toBe(12.3);
  });
});

describe('clampTarget', () => {
  it('keeps the target within 2 … 98 on the 0.1 grid', () => {
    expect(clampTarget(1)).toBe(2);
    expect(clampTarget(99)).toBe(98);
    expect(clampTarget(50.04)).toBe(50);
    expect(clampTarget(50.06)).toBe(50.1);
    expect(clampTarget(Number.NaN)).toBe(50);
    expect(formatTarget(50)).toBe('50.0');
  });
});
