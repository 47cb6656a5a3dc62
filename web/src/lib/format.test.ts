import { formatAmount, formatDate, formatMoney, formatPercentChange, formatMultiplier } from './format';

describe('formatAmount', () => {
  it.each([
    [0, '0.00'],
    [5, '5.00'],
    [1234.5, '1,234.50'],
    [1000000, '1,000,000.00'],
    [1234567.891, '1,234,567.89'],
    [0.1 + 0.2, '0.30'],
    [1234.56, '1,234.56'],
    [-42.5, '-42.50'],
  ])('%s → %s', (value, expected) => {
    expect(formatAmount(value)).toBe(expected);
  });

  it('truncates to cents rather than rounding up', () => {
    expect(formatAmount(9.999)).toBe('9.99');
    expect(formatAmount(0.005)).toBe('0.00');
  });

  it('shows a non-finite value as zero', () => {
    expect(formatAmount(Number.NaN)).toBe('0.00');
  });
});

describe('formatMoney', () => {
  it('adds the dollar sign after a minus', () => {
    expect(formatMoney(1234.5)).toBe('$1,234.50');
    expect(formatMoney(-3)).toBe('-$3.00');
    expect(formatMoney(-0.001)).toBe('$0.00');
  });
});

describe('formatPercentChange', () => {
  it.each([
    [12.34, '+12.3%'],
    [12.35, '+12.4%'],
    [-5, '-5.0%'],
    [0, '0.0%'],
    [-0.04, '0.0%'],
    [100, '+100.0%'],
    [Number.POSITIVE_INFINITY, '0.0%'],
  ])('%s → %s', (value, expected) => {
    expect(formatPercentChange(value)).toBe(expected);
  });
});

describe('formatDate', () => {
  it('shows the local date, or a dash when missing', () => {
    expect(formatDate('2026-03-04T12:00:00Z')).toBe(new Date('2026-03-04T12:00:00Z').toLocaleDateString());
    expect(formatDate(undefined)).toBe('—');
    expect(formatDate('not a date')).toBe('—');
  });
});

describe('formatMultiplier', () => {
  it('shows two decimals and an x', () => {
    expect(formatMultiplier(1.98)).toBe('1.98x');
    expect(formatMultiplier(100)).toBe('100.00x');
    expect(formatMultiplier(0)).toBe('0.00x');
    expect(formatMultiplier(Number.NaN)).toBe('0.00x');
  });
});
