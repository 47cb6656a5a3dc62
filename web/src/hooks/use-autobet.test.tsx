import { QueryClientProvider } from '@tanstack/react-query';
import { act, renderHook, waitFor } from '@testing-library/react';
import type { ReactNode } from 'react';
import { userQueryKey } from '@/lib/auth';
import { player, testQueryClient } from '@/testing/test-utils';
import { ApiError } from '@/lib/api-client';
import { deferred } from '@/testing/mock-api';
import { DEFAULT_AUTOBET } from '@/lib/autobet';
import { useAutobet, type AutobetResult } from './use-autobet';

/** fakeGame is a game whose bets settle when the test says so, with one bet in flight at a time checked. */
function fakeGame() {
  const pending: { amount: number; settle: ReturnType<typeof deferred<AutobetResult>> }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const placeBet = vi.fn((amount: number) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const d = deferred<AutobetResult>();
    pending.push({ amount, settle: d });
    return d.promise.finally(() => {
      inFlight--;
    });
  });
  return {
    placeBet,
    pending,
    maxInFlight: () => maxInFlight,
    async settleNext(payout: (amount: number) => number) {
      const bet = pending.at(-1);
      if (!bet) throw new Error('no bet in flight');
      await act(async () => {
        bet.settle.resolve({ stake: bet.amount, payout: payout(bet.amount) });
        await Promise.resolve();
      });
    },
  };
}

/** withBalance renders the hook with the signed-in player's cached balance, as the app has it. */
function withBalance(balance: number) {
  const client = testQueryClient();
  client.setQueryData(userQueryKey, { ...player, balance });
  return {
    client,
    wrapper: ({ children }: { children: ReactNode }) => (
      <QueryClientProvider client={client}>{children}</QueryClientProvider>
    ),
  };
}

describe('useAutobet', () => {
  it('places the bets one at a time, follows the rules and counts', async () => {
    const g = fakeGame();
    window.localStorage.setItem(
      'fairplay.autobet.dice',
      JSON.stringify({ ...DEFAULT_AUTOBET, bets: 3, onLoss: { mode: 'increase', percent: 100 } }),
    );
    const { result } = renderHook(() => useAutobet({ game: 'dice', placeBet: g.placeBet }), withBalance(100));
    expect(result.current.settings.bets).toBe(3);
    act(() => {
      result.current.start(0.1);
    });
    expect(result.current.running).toBe(true);
    await waitFor(() => {
      expect(g.placeBet).toHaveBeenCalledTimes(1);
    });
    await g.settleNext(() => 0);
    await waitFor(() => {
      expect(g.placeBet).toHaveBeenCalledTimes(2);
    });
    expect(g.placeBet).toHaveBeenLastCalledWith(0.2);
    expect(result.current.progress).toEqual({ count: 1, bets: 3, net: -0.1 });
    await g.settleNext(() => 0);
    await waitFor(() => {
      expect(g.placeBet).toHaveBeenCalledTimes(3);
    });
    expect(g.placeBet).toHaveBeenLastCalledWith(0.4);
    await g.settleNext((a) => a * 2);
    await waitFor(() => {
      expect(result.current.running).toBe(false);
    });
    expect(g.placeBet).toHaveBeenCalledTimes(3);
    expect(g.maxInFlight()).toBe(1);
    expect(result.current.progress).toEqual({ count: 3, bets: 3, net: 0.1 });
    expect(result.current.message).toBe('Autobet finished: 3 bets placed.');
  });

  it('sends nothing after Stop; the bet in flight completes and is counted', async () => {
    const g = fakeGame();
    const { result } = renderHook(() => useAutobet({ game: 'dice', placeBet: g.placeBet }), withBalance(100));
    act(() => {
      result.current.setSettings({ ...DEFAULT_AUTOBET, bets: 0 });
      result.current.start(1);
    });
    await waitFor(() => {
      expect(g.placeBet).toHaveBeenCalledTimes(1);
    });
    act(() => {
      result.current.stop();
    });
    await g.settleNext(() => 0);
    await waitFor(() => {
      expect(result.current.running).toBe(false);
    });
    expect(g.placeBet).toHaveBeenCalledTimes(1);
    expect(result.current.progress?.count).toBe(1);
    expect(result.current.message).toBe('Autobet stopped.');
    expect(JSON.parse(window.localStorage.getItem('fairplay.autobet.dice') ?? '{}')).toMatchObject({ bets: 0 });
  });

  it('stops when the page unmounts', async () => {
    const g = fakeGame();
    const { result, unmount } = renderHook(() => useAutobet({ game: 'keno', placeBet: g.placeBet }), withBalance(100));
    act(() => {
      result.current.setSettings({ ...DEFAULT_AUTOBET, bets: 0 });
      result.current.start(1);
    });
    await waitFor(() => {
      expect(g.placeBet).toHaveBeenCalledTimes(1);
    });
    unmount();
    await act(async () => {
      g.pending[0]?.settle.resolve({ stake: 1, payout: 0 });
      await new Promise((r) => setTimeout(r, 10));
    });
    expect(g.placeBet).toHaveBeenCalledTimes(1);
  });

  it("stops on the server's refusal and shows it", async () => {
    const placeBet = vi.fn(() => Promise.reject(new ApiError(400, 'Bet exceeds the maximum of $1,000.00')));
    const { result } = renderHook(() => useAutobet({ game: 'dice', placeBet }), withBalance(100));
    act(() => {
      result.current.start(1);
    });
    await waitFor(() => {
      expect(result.current.running).toBe(false);
    });
    expect(placeBet).toHaveBeenCalledTimes(1);
    expect(result.current.message).toBe('Autobet stopped: Bet exceeds the maximum of $1,000.00');
  });

  it('never places a bet above the balance', async () => {
    const placeBet = vi.fn();
    const { result } = renderHook(() => useAutobet({ game: 'dice', placeBet }), withBalance(0.5));
    act(() => {
      result.current.start(1);
    });
    await waitFor(() => {
      expect(result.current.running).toBe(false);
    });
    expect(placeBet).not.toHaveBeenCalled();
    expect(result.current.message).toBe('Autobet stopped: the next bet ($1.00) is above your balance.');
  });

  it('checks each next bet against the balance shown after the last result, not a stale copy', async () => {
    const { client, wrapper } = withBalance(10);
    const placeBet = vi.fn((amount: number) => {
      // The game reveals the result, and with it the new balance, before it resolves.
      client.setQueryData(userQueryKey, { ...player, balance: 0.5 });
      return Promise.resolve({ stake: amount, payout: 0 });
    });
    const { result } = renderHook(() => useAutobet({ game: 'dice', placeBet }), { wrapper });
    act(() => {
      result.current.setSettings({ ...DEFAULT_AUTOBET, bets: 0 });
      result.current.start(1);
    });
    await waitFor(() => {
      expect(result.current.running).toBe(false);
    });
    expect(placeBet).toHaveBeenCalledTimes(1);
    expect(result.current.stopReason).toEqual({ kind: 'balance', bet: 1 });
  });

  it(
    'runs 1,000 bets through the hook and stops exactly at the count, or at the first bet past a stop rule',
    { timeout: 30000 },
    async () => {
      // A seeded Dice-like game (49.5% to win 1.98x), the balance following each bet in the cache as the games do.
      const seeded = (seed: number) => {
        let a = seed >>> 0;
        return () => {
          a = (a * 1664525 + 1013904223) >>> 0;
          return a / 4294967296;
        };
      };
      const cases = [
        { settings: { ...DEFAULT_AUTOBET, bets: 1000 }, seed: 11 },
        {
          settings: { ...DEFAULT_AUTOBET, bets: 1000, onLoss: { mode: 'increase', percent: 100 }, stopLoss: 20 },
          seed: 12,
        },
        { settings: { ...DEFAULT_AUTOBET, bets: 1000, stopProfit: 4 }, seed: 13 },
      ] as const;
      for (const { settings, seed } of cases) {
        window.localStorage.clear();
        const { client, wrapper } = withBalance(100_000);
        const rnd = seeded(seed);
        let balanceCents = 100_000 * 100;
        const nets: number[] = [];
        let net = 0;
        const placeBet = vi.fn((amount: number) => {
          const stake = Math.round(amount * 100);
          const payout = rnd() < 0.495 ? Math.floor(stake * 1.98) : 0;
          net += payout - stake;
          nets.push(net);
          balanceCents += payout - stake;
          client.setQueryData(userQueryKey, { ...player, balance: balanceCents / 100 });
          return Promise.resolve({ stake: amount, payout: payout / 100 });
        });
        const { result, unmount } = renderHook(() => useAutobet({ game: 'dice', placeBet }), { wrapper });
        act(() => {
          result.current.setSettings(settings);
          result.current.start(1);
        });
        await waitFor(
          () => {
            expect(result.current.running).toBe(false);
          },
          { timeout: 20000 },
        );
        const placed = placeBet.mock.calls.length;
        const reason = result.current.stopReason;
        expect(result.current.progress).toEqual({ count: placed, bets: 1000, net: net / 100 });
        if (reason?.kind === 'count') {
          expect(placed).toBe(1000);
        } else if (reason?.kind === 'loss' || reason?.kind === 'lossAhead') {
          // Never past the stop on loss: the bet that could pass it is not placed.
          expect(nets.every((x) => -x <= 2000)).toBe(true);
          expect(nets.slice(0, -1).every((x) => -x < 2000)).toBe(true);
        } else if (reason?.kind === 'profit') {
          expect(nets.at(-1)).toBeGreaterThanOrEqual(400);
          expect(nets.slice(0, -1).every((x) => x < 400)).toBe(true);
        } else {
          throw new Error(`unexpected stop ${JSON.stringify(reason)}`);
        }
        console.info(
          `1,000-bet run (seed ${String(seed)}): ${result.current.message ?? ''} after ${String(placed)} bets`,
        );
        unmount();
      }
    },
  );
});
