import { QueryClientProvider } from '@tanstack/react-query';
import { act, renderHook } from '@testing-library/react';
import type { ReactNode } from 'react';
import { testQueryClient, player } from '@/testing/test-utils';
import { userQueryKey, type User } from './auth';
import { BalanceLedger, useBetReveals } from './bet-reveals';
import { isHeld, resetReveals, revealsSnapshot } from './reveals';

afterEach(() => {
  resetReveals();
});

describe('BalanceLedger', () => {
  it('shows nothing before a balance arrives', () => {
    const ledger = new BalanceLedger();
    expect(ledger.shown()).toBeNull();
    ledger.arrive(undefined, 0);
    expect(ledger.shown()).toBeNull();
  });

  it('holds a payout back until its reveal: the stake leaves at once, the win joins at the reveal', () => {
    const ledger = new BalanceLedger();
    // 100 before; a $1 bet that pays $3.
    const t = ledger.arrive(102, 3);
    expect(ledger.shown()).toBe(99);
    expect(ledger.reveal(t)).toBe(true);
    expect(ledger.shown()).toBe(102);
    expect(ledger.reveal(t)).toBe(false);
  });

  it('keeps several bets in flight apart, whatever order they land in', () => {
    const ledger = new BalanceLedger();
    // 100 before; ball 1: $1 paying $3 (→ 102); ball 2: $1 paying $0.40 (→ 101.40).
    const b1 = ledger.arrive(102, 3);
    const b2 = ledger.arrive(101.4, 0.4);
    // Ball 2's balance includes ball 1's win: neither shows before its reveal.
    expect(ledger.shown()).toBe(98);
    ledger.reveal(b2);
    expect(ledger.shown()).toBe(98.4);
    ledger.reveal(b1);
    expect(ledger.shown()).toBe(101.4);
  });

  it('never lets an older balance overwrite a newer one', () => {
    const ledger = new BalanceLedger();
    const old = ledger.arrive(50, 0);
    ledger.arrive(40, 0);
    ledger.reveal(old);
    expect(ledger.shown()).toBe(40);
  });

  it('keeps the balance when a response carries none', () => {
    const ledger = new BalanceLedger();
    ledger.arrive(80, 0);
    const burst = ledger.arrive(undefined, 0);
    ledger.reveal(burst);
    expect(ledger.shown()).toBe(80);
  });

  it('does not subtract a hidden payout the newest balance does not include', () => {
    const ledger = new BalanceLedger();
    ledger.arrive(70, 0);
    // A settling response without a balance: its payout is not in 70.
    ledger.arrive(undefined, 5);
    expect(ledger.shown()).toBe(70);
  });
});

function setup() {
  const queryClient = testQueryClient();
  queryClient.setQueryData<User>(userQueryKey, { ...player, balance: 100 });
  const wrapper = ({ children }: { children: ReactNode }) => (
    <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>
  );
  const hook = renderHook(() => useBetReveals('plinko'), { wrapper });
  const balance = () => queryClient.getQueryData<User>(userQueryKey)?.balance;
  return { hook, balance };
}

describe('useBetReveals', () => {
  it('holds the bet and the win until the reveal, then announces it once', () => {
    const { hook, balance } = setup();
    let ticket = 0;
    act(() => {
      ticket = hook.result.current.arrive({
        newBalance: 102,
        settles: { betId: 'p1', amount: 1, multiplier: 3, payout: 3 },
      });
    });
    expect(balance()).toBe(99);
    expect(isHeld('p1')).toBe(true);
    expect(revealsSnapshot()).toHaveLength(0);

    act(() => {
      hook.result.current.reveal(ticket);
      hook.result.current.reveal(ticket);
    });
    expect(balance()).toBe(102);
    expect(isHeld('p1')).toBe(false);
    expect(revealsSnapshot()).toEqual([
      expect.objectContaining({ game: 'plinko', betId: 'p1', amount: 1, multiplier: 3, payout: 3 }),
    ]);
  });

  it('shows a response that settles nothing at once', () => {
    const { hook, balance } = setup();
    act(() => {
      hook.result.current.arrive({ newBalance: 95 });
    });
    expect(balance()).toBe(95);
    expect(revealsSnapshot()).toHaveLength(0);
  });

  it('reveals what is still hidden when the screen goes away', () => {
    const { hook, balance } = setup();
    act(() => {
      hook.result.current.arrive({ newBalance: 102, settles: { betId: 'p1', amount: 1, multiplier: 3, payout: 3 } });
      hook.result.current.arrive({
        newBalance: 101.4,
        settles: { betId: 'p2', amount: 1, multiplier: 0.4, payout: 0.4 },
      });
    });
    expect(balance()).toBe(98);
    hook.unmount();
    expect(balance()).toBe(101.4);
    expect(revealsSnapshot().map((r) => r.betId)).toEqual(['p2', 'p1']);
  });
});
