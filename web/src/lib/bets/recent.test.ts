import type { Reveal } from '@/lib/reveals';
import type { Bet } from './get-bets';
import { isWin, recentOutcomes } from './recent';

const fairness = { serverSeedHash: 'ab', serverSeed: '', clientSeed: 'c', nonce: 1 };

function bet(id: string, game: string, extra: Partial<Bet> = {}): Bet {
  return {
    _id: id,
    game,
    amount: 1,
    multiplier: 2,
    payout: 2,
    status: 'settled',
    createdAt: '2026-11-24T05:00:00Z',
    fairness,
    params: '{}',
    outcome: '{}',
    ...extra,
  };
}

function reveal(betId: string, game: Reveal['game'], payout = 0): Reveal {
  return { betId, game, amount: 1, multiplier: payout, payout, at: 1000 };
}

const none = () => false;

describe('recentOutcomes', () => {
  it('puts reveals before the history, without duplicates, up to the limit', () => {
    const out = recentOutcomes(
      [reveal('r2', 'dice', 2), reveal('h1', 'dice', 2)],
      [bet('h1', 'dice'), bet('h2', 'dice'), bet('h3', 'dice')],
      { limit: 3, held: none },
    );
    expect(out.map((o) => o.betId)).toEqual(['r2', 'h1', 'h2']);
    expect(out[1]?.at).toBe(1000);
  });

  it('keeps one game when asked', () => {
    const out = recentOutcomes([reveal('r1', 'keno'), reveal('r2', 'dice')], [bet('h1', 'keno'), bet('h2', 'dice')], {
      limit: 10,
      game: 'dice',
      held: none,
    });
    expect(out.map((o) => o.betId)).toEqual(['r2', 'h2']);
  });

  it('leaves out running games, held bets and unknown games from the history', () => {
    const out = recentOutcomes(
      [],
      [bet('run', 'mines', { status: 'active' }), bet('held', 'plinko'), bet('odd', 'roulette'), bet('ok', 'pump')],
      { limit: 10, held: (id) => id === 'held' },
    );
    expect(out.map((o) => o.betId)).toEqual(['ok']);
  });

  it('reads the history time, and 0 when it cannot', () => {
    const [a, b] = recentOutcomes([], [bet('a', 'dice'), bet('b', 'dice', { createdAt: 'nonsense' })], {
      limit: 10,
      held: none,
    });
    expect(a?.at).toBe(Date.parse('2026-11-24T05:00:00Z'));
    expect(b?.at).toBe(0);
  });
});

describe('isWin', () => {
  it.each([
    [1, 2, true],
    [1, 1, false],
    [1, 0.5, false],
    [1, 0, false],
  ])('stake %d, payout %d → %s', (amount, payout, want) => {
    expect(isWin({ amount, payout })).toBe(want);
  });
});
