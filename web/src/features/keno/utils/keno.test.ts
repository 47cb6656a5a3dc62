import { autoPick, formatPayout, payoutRows, revealDelay, revealDuration, togglePick } from './keno';

describe('formatPayout', () => {
  it('shows a dash for zero and two decimals with an x otherwise', () => {
    expect(formatPayout(0)).toBe('-');
    expect(formatPayout(3.96)).toBe('3.96x');
    expect(formatPayout(1000)).toBe('1000.00x');
    expect(formatPayout(0.25)).toBe('0.25x');
  });
});

describe('payoutRows', () => {
  it('has rows for 1 … 10 picks and columns for 0 … 10 hits', () => {
    const rows = payoutRows('classic');
    expect(rows.map((r) => r.picks)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for (const row of rows) expect(row.cells).toHaveLength(11);
    expect(rows[0]!.cells).toEqual(['-', '3.96x', null, null, null, null, null, null, null, null, null]);
    expect(rows[9]!.cells.at(-1)).toBe('100.00x');
    expect(payoutRows('low')[0]!.cells.slice(0, 2)).toEqual(['0.70x', '1.85x']);
    expect(payoutRows('high')[2]!.cells.slice(0, 4)).toEqual(['-', '-', '-', '81.50x']);
  });
});

describe('togglePick', () => {
  it('adds up to 10 numbers and takes one off again', () => {
    expect(togglePick([], 5)).toEqual([5]);
    expect(togglePick([5, 7], 5)).toEqual([7]);
    const ten = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(togglePick(ten, 11)).toEqual(ten);
    expect(togglePick(ten, 10)).toHaveLength(9);
    expect(togglePick([], 41)).toEqual([]);
  });
});

describe('autoPick', () => {
  it('picks 10 distinct numbers by default, or as many as are selected', () => {
    const ten = autoPick(0);
    expect(ten).toHaveLength(10);
    expect(new Set(ten).size).toBe(10);
    expect(ten.every((n) => n >= 1 && n <= 40)).toBe(true);
    expect(autoPick(3)).toHaveLength(3);
    expect(autoPick(0, () => 0)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(autoPick(2, () => 0.999)).toEqual([39, 40]);
  });
});

describe('reveal timing', () => {
  it('flips one number at a time for 300 ms, 80 ms apart', () => {
    expect(revealDelay(0)).toBe(0);
    expect(revealDelay(1)).toBe(380);
    expect(revealDelay(9)).toBe(3420);
    expect(revealDuration(10)).toBe(3720);
    expect(revealDuration(0)).toBe(0);
  });
});
