import {
  beforeBet,
  DEFAULT_AUTOBET,
  increaseCents,
  loadSettings,
  parseSettings,
  saveSettings,
  settle,
  startState,
  stopMessage,
  type AutobetSettings,
  type StopReason,
} from './autobet';

/** mulberry32 is a small seeded PRNG: the same seed gives the same outcome sequence on every run. */
function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Trace {
  stakes: number[];
  payouts: number[];
  stop: StopReason | null;
}

/**
 * run drives the engine as the hook does, against a seeded Dice-like game: a win pays multiplier × stake
 * (rounded down to a cent, like the server), with probability chance. The balance follows the bets.
 */
function run(settings: AutobetSettings, base: number, balance: number, seed: number, limit = 100_000): Trace {
  const rnd = mulberry32(seed);
  let state = startState(base);
  let balanceCents = Math.round(balance * 100);
  const stakes: number[] = [];
  const payouts: number[] = [];
  for (let i = 0; i < limit; i++) {
    const refused = beforeBet(settings, state, balanceCents / 100);
    if (refused) return { stakes, payouts, stop: refused };
    const stake = state.betCents;
    const payout = rnd() < 0.495 ? Math.floor(stake * 1.98) : 0;
    stakes.push(stake);
    payouts.push(payout);
    balanceCents += payout - stake;
    const step = settle(settings, state, { stakeCents: stake, payoutCents: payout });
    state = step.state;
    if (step.stop) {
      expect(state.count).toBe(stakes.length);
      expect(state.netCents).toBe(sum(payouts) - sum(stakes));
      return { stakes, payouts, stop: step.stop };
    }
  }
  return { stakes, payouts, stop: null };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** nets is the running net result after each bet, summed independently of the engine. */
function nets(t: Trace): number[] {
  let net = 0;
  return t.stakes.map((s, i) => (net += (t.payouts[i] ?? 0) - s));
}

describe('autobet engine', () => {
  it('increases by a percent to the nearest cent, halves up, without float drift', () => {
    expect(increaseCents(100, 50)).toBe(150);
    expect(increaseCents(33, 50)).toBe(50); // 49.5 → 50
    expect(increaseCents(1, 1)).toBe(1); // 1.01 → 1
    expect(increaseCents(10, 100)).toBe(20);
    expect(increaseCents(7, 0.5)).toBe(7); // 7.035 → 7
    expect(increaseCents(30, 12.5)).toBe(34); // 33.75 → 34
    // 0.1 + 10% a thousand times in floats drifts; in cents each step is the rounded one.
    let cents = 10;
    for (let i = 0; i < 1000; i++) cents = increaseCents(cents, 0);
    expect(cents).toBe(10);
  });

  it('places exactly 1,000 bets when the count is 1,000, with an exact net', () => {
    const t = run({ ...DEFAULT_AUTOBET, bets: 1000 }, 0.1, 1_000_000, 42);
    expect(t.stop).toEqual({ kind: 'count', count: 1000 });
    expect(t.stakes).toHaveLength(1000);
    expect(t.stakes.every((s) => s === 10)).toBe(true);
    const net = nets(t).at(-1) ?? 0;
    expect(stopMessage(t.stop ?? { kind: 'stopped' })).toBe('Autobet finished: 1000 bets placed.');
    // The float sum of the same bets is not exact to the cent; the engine's is.
    expect(Number.isInteger(net)).toBe(true);
  });

  it('stops on net profit at the first bet whose net reaches it, over 1,000 bets', () => {
    const settings: AutobetSettings = { ...DEFAULT_AUTOBET, bets: 0, stopProfit: 3.37 };
    let stopped = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const t = run(settings, 1, 1_000_000, seed, 1000);
      const n = nets(t);
      if (t.stop === null) {
        expect(t.stakes).toHaveLength(1000);
        expect(n.every((x) => x < 337)).toBe(true);
        continue;
      }
      stopped++;
      expect(t.stop).toEqual({ kind: 'profit', net: (n.at(-1) ?? 0) / 100 });
      expect(n.at(-1)).toBeGreaterThanOrEqual(337);
      expect(n.slice(0, -1).every((x) => x < 337)).toBe(true);
    }
    expect(stopped).toBeGreaterThan(0);
  });

  it('never loses more than the stop on loss, with a martingale on loss', () => {
    const settings: AutobetSettings = {
      ...DEFAULT_AUTOBET,
      bets: 1000,
      onLoss: { mode: 'increase', percent: 100 },
      stopLoss: 25,
    };
    let hit = 0;
    for (const seed of [1, 2, 3, 4, 5]) {
      const t = run(settings, 0.1, 1_000_000, seed);
      const n = nets(t);
      // The net loss never passes the limit: a bet that, lost, would pass it is not placed.
      expect(n.every((x) => -x <= 2500)).toBe(true);
      if (t.stop?.kind === 'loss' || t.stop?.kind === 'lossAhead') {
        hit++;
        const last = n.at(-1) ?? 0;
        if (t.stop.kind === 'loss') expect(-last).toBe(2500);
        else {
          const lostLast = (t.payouts.at(-1) ?? 0) <= (t.stakes.at(-1) ?? 0);
          const next = lostLast ? (t.stakes.at(-1) ?? 0) * 2 : 10;
          expect(t.stop).toEqual({ kind: 'lossAhead', bet: next / 100, net: last / 100 });
          expect(next - last).toBeGreaterThan(2500); // lost, it would have passed the limit
        }
        expect(n.slice(0, -1).every((x) => -x < 2500)).toBe(true);
      } else {
        expect(t.stop).toEqual({ kind: 'count', count: 1000 });
        expect(n.every((x) => -x < 2500)).toBe(true);
      }
      // Each bet after a loss is double the one before; after a win it is the base.
      for (let i = 1; i < t.stakes.length; i++) {
        const lost = (t.payouts[i - 1] ?? 0) <= (t.stakes[i - 1] ?? 0);
        expect(t.stakes[i]).toBe(lost ? (t.stakes[i - 1] ?? 0) * 2 : 10);
      }
    }
    expect(hit).toBeGreaterThan(0);
  });

  it('stops after the first single win above the limit, and not on a win equal to it', () => {
    // A 1.98x win on 1.00 pays 1.98: a limit of 1.98 never stops, 1.97 stops on the first win.
    const equal = run({ ...DEFAULT_AUTOBET, bets: 1000, stopWinAbove: 1.98 }, 1, 1_000_000, 9);
    expect(equal.stop).toEqual({ kind: 'count', count: 1000 });
    const below = run({ ...DEFAULT_AUTOBET, bets: 1000, stopWinAbove: 1.97 }, 1, 1_000_000, 9);
    expect(below.stop).toEqual({ kind: 'singleWin', payout: 1.98 });
    expect(below.payouts.at(-1)).toBe(198);
    expect(below.payouts.slice(0, -1).every((p) => p === 0)).toBe(true);
  });

  it('stops before a bet above the balance and never places it', () => {
    const settings: AutobetSettings = { ...DEFAULT_AUTOBET, bets: 0, onLoss: { mode: 'increase', percent: 100 } };
    const t = run(settings, 1, 20, 3);
    expect(t.stop?.kind).toBe('balance');
    const placed = sum(t.stakes) - sum(t.payouts);
    const next = t.stop?.kind === 'balance' ? t.stop.bet * 100 : 0;
    expect(next).toBeGreaterThan(2000 - placed);
    expect(stopMessage(t.stop ?? { kind: 'stopped' })).toMatch(/is above your balance/);
  });

  it('checks the rules in order: single win, profit, loss, count', () => {
    const s: AutobetSettings = {
      bets: 1,
      onWin: { mode: 'reset' },
      onLoss: { mode: 'reset' },
      stopProfit: 1,
      stopLoss: 1,
      stopWinAbove: 1,
    };
    const st = startState(1);
    expect(settle(s, st, { stakeCents: 100, payoutCents: 300 }).stop?.kind).toBe('singleWin');
    expect(settle({ ...s, stopWinAbove: 0 }, st, { stakeCents: 100, payoutCents: 300 }).stop?.kind).toBe('profit');
    expect(settle(s, st, { stakeCents: 100, payoutCents: 0 }).stop?.kind).toBe('loss');
    expect(settle({ ...s, stopLoss: 0 }, st, { stakeCents: 100, payoutCents: 0 }).stop?.kind).toBe('count');
    expect(settle({ ...s, bets: 0, stopLoss: 0 }, st, { stakeCents: 100, payoutCents: 0 }).stop).toBeNull();
  });

  it('validates stored settings field by field', () => {
    expect(parseSettings(null)).toEqual(DEFAULT_AUTOBET);
    expect(parseSettings('x')).toEqual(DEFAULT_AUTOBET);
    expect(
      parseSettings({
        bets: -1,
        onWin: { mode: 'increase', percent: 5000 },
        onLoss: { mode: 'increase', percent: 25 },
        stopLoss: 'x',
        stopProfit: 12.5,
      }),
    ).toEqual({ ...DEFAULT_AUTOBET, onLoss: { mode: 'increase', percent: 25 }, stopProfit: 12.5 });
    expect(parseSettings({ bets: 2.5 }).bets).toBe(DEFAULT_AUTOBET.bets);
    window.localStorage.setItem('fairplay.autobet.dice', '{not json');
    expect(loadSettings('dice')).toEqual(DEFAULT_AUTOBET);
    const saved: AutobetSettings = { ...DEFAULT_AUTOBET, bets: 0, stopWinAbove: 50 };
    saveSettings('dice', saved);
    expect(loadSettings('dice')).toEqual(saved);
    expect(loadSettings('keno')).toEqual(DEFAULT_AUTOBET);
  });
});
