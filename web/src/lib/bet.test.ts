import { ApiError } from './api-client';
import {
  BET_DEFAULT,
  BET_MIN,
  BET_STEP,
  betRefusal,
  doubleBet,
  formatBetInput,
  halveBet,
  parseBetAmount,
  playError,
} from './bet';

describe('parseBetAmount', () => {
  it.each([
    ['1', 1],
    ['0.1', 0.1],
    ['2.5', 2.5],
    ['', 0],
    ['abc', 0],
    ['-', 0],
    ['-3', -3],
  ])('reads %j as %s', (text, want) => {
    expect(parseBetAmount(text)).toBe(want);
  });

  it('has the limits of SPEC.md §9', () => {
    expect([BET_MIN, BET_STEP, BET_DEFAULT]).toEqual([0.1, 0.1, 1]);
  });
});

describe('halveBet and doubleBet', () => {
  it('apply without a floor', () => {
    expect(halveBet(1)).toBe(0.5);
    expect(halveBet(0.1)).toBe(0.05);
    expect(halveBet(0.05)).toBe(0.02);
    expect(halveBet(0.15)).toBe(0.07);
    expect(halveBet(0.01)).toBe(0);
    expect(halveBet(123.45)).toBe(61.72);
    expect(doubleBet(0.05)).toBe(0.1);
    expect(doubleBet(0.1)).toBe(0.2);
    expect(doubleBet(0)).toBe(0);
  });
});

describe('formatBetInput', () => {
  it.each([
    [1, '1'],
    [0.5, '0.5'],
    [0.05, '0.05'],
    [100, '100'],
    [100.1, '100.1'],
    [0.1 + 0.2, '0.3'],
    [1.005 * 3, '3.01'],
    [0, '0'],
    [Number.NaN, '0'],
  ])('writes %s as %j', (amount, want) => {
    expect(formatBetInput(amount)).toBe(want);
  });

  it('shows at most two decimals after any run of halvings and doublings', () => {
    // From every stake a player can type with up to three decimals.
    for (let milli = 1; milli <= 20000; milli += 7) {
      let amount = milli / 1000;
      for (const step of [halveBet, halveBet, doubleBet, halveBet, doubleBet, doubleBet, halveBet]) {
        amount = step(amount);
        const text = formatBetInput(amount);
        expect(text, `${milli / 1000} → ${text}`).toMatch(/^\d+(\.\d{1,2})?$/);
        expect(parseBetAmount(text)).toBeCloseTo(amount, 9);
      }
    }
  });
});

describe('playError', () => {
  const ok = { signedIn: true, bet: 1, balance: 10 };

  it('accepts a valid bet', () => {
    expect(playError(ok)).toBeNull();
    expect(playError({ ...ok, picks: 3 })).toBeNull();
    expect(playError({ ...ok, bet: 10 })).toBeNull();
  });

  it('checks login, numbers, amount and balance in that order', () => {
    expect(playError({ signedIn: false, bet: 0, balance: 0, picks: 0 })).toBe('Please login to play');
    expect(playError({ signedIn: true, bet: 0, balance: 0, picks: 0 })).toBe('Please select at least one number');
    expect(playError({ signedIn: true, bet: 0, balance: 0, picks: 1 })).toBe('Please enter a valid bet amount');
    expect(playError({ signedIn: true, bet: -1, balance: 0 })).toBe('Please enter a valid bet amount');
    expect(playError({ signedIn: true, bet: 5, balance: 4.99 })).toBe('Insufficient balance');
    expect(playError({ signedIn: true, bet: 5, balance: 4.99, picks: 2 })).toBe('Insufficient balance');
  });
});

describe('betRefusal', () => {
  it("shows the server's message for a bet it refused as invalid", () => {
    expect(betRefusal(new ApiError(400, 'The minimum bet is 0.1'))).toBe('The minimum bet is 0.1');
  });
  it('leaves every other failure to the generic handling', () => {
    expect(betRefusal(new ApiError(500, 'Something went wrong. Please try again.'))).toBeNull();
    expect(betRefusal(new ApiError(400, undefined))).toBeNull();
    expect(betRefusal(new Error('network'))).toBeNull();
  });
});
