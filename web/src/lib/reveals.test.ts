import { afterEach, describe, expect, it } from 'vitest';
import { announceReveal, holdBet, isHeld, resetReveals, revealsSnapshot, subscribeReveals } from './reveals';

afterEach(() => {
  resetReveals();
});

describe('reveals', () => {
  it('holds a bet until its reveal is announced', () => {
    holdBet('b1');
    expect(isHeld('b1')).toBe(true);
    announceReveal({ game: 'dice', betId: 'b1', amount: 1, multiplier: 2, payout: 2 });
    expect(isHeld('b1')).toBe(false);
    expect(revealsSnapshot()).toHaveLength(1);
    expect(revealsSnapshot()[0]).toMatchObject({ game: 'dice', betId: 'b1', payout: 2 });
  });

  it('keeps the newest first and notifies subscribers', () => {
    let calls = 0;
    const off = subscribeReveals(() => {
      calls++;
    });
    announceReveal({ game: 'keno', betId: 'a', amount: 1, multiplier: 0, payout: 0 });
    announceReveal({ game: 'plinko', betId: 'b', amount: 1, multiplier: 1.5, payout: 1.5 });
    off();
    announceReveal({ game: 'plinko', betId: 'c', amount: 1, multiplier: 1.5, payout: 1.5 });
    expect(calls).toBe(2);
    expect(revealsSnapshot().map((r) => r.betId)).toEqual(['c', 'b', 'a']);
  });

  it('keeps at most 200 reveals', () => {
    for (let i = 0; i < 250; i++) announceReveal({ game: 'dice', betId: `b${i}`, amount: 1, multiplier: 0, payout: 0 });
    expect(revealsSnapshot()).toHaveLength(200);
    expect(revealsSnapshot()[0]?.betId).toBe('b249');
  });
});
