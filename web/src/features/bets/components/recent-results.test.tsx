import { act, screen, within } from '@testing-library/react';
import { announceReveal, holdBet, resetReveals } from '@/lib/reveals';
import { fairness, gameApi } from '@/testing/game-api';
import { json } from '@/testing/mock-api';
import { renderApp } from '@/testing/test-utils';

function settled(id: string, multiplier: number) {
  return {
    _id: id,
    game: 'dice',
    amount: 1,
    multiplier,
    payout: multiplier,
    status: 'settled',
    createdAt: '2026-11-24T04:00:00Z',
    fairness,
    params: '{}',
    outcome: '{}',
  };
}

const strip = () => within(screen.getByRole('list', { name: 'Recent results' }));
const pills = () =>
  strip()
    .getAllByRole('listitem')
    .map((li) => li.textContent);

afterEach(() => {
  resetReveals();
});

describe('Recent results', () => {
  it('starts from the game’s history and grows at each reveal, not before', async () => {
    const server = gameApi({
      'GET /api/games/bets': () =>
        json({
          bets: [settled('h1', 1.98), { ...settled('h0', 0), status: 'active' }, settled('h2', 0)],
          totalPages: 1,
          page: 1,
        }),
    });
    renderApp('/games/dice');
    await screen.findByRole('list', { name: 'Recent results' });
    await strip().findByText('1.98x');
    expect(pills()).toEqual(['1.98x win', '0.00x loss']);
    const seed = server
      .calls('GET /api/games/bets')
      .map((c) => new URL(c.url, 'http://x').searchParams)
      .find((q) => q.get('game') === 'dice');
    expect(seed?.get('limit')).toBe('10');
    expect(seed?.get('page')).toBe('1');

    act(() => {
      holdBet('r1');
    });
    expect(pills()).toHaveLength(2);
    act(() => {
      announceReveal({ game: 'dice', betId: 'r1', amount: 2, multiplier: 3.96, payout: 7.92 });
      announceReveal({ game: 'keno', betId: 'k1', amount: 2, multiplier: 10, payout: 20 });
    });
    expect(pills()).toEqual(['3.96x win', '1.98x win', '0.00x loss']);
  });

  it('shows ten at most', async () => {
    gameApi({ 'GET /api/games/bets': () => json({ bets: [], totalPages: 0, page: 1 }) });
    renderApp('/games/dice');
    expect(await screen.findByText('Your results will show here')).toBeInTheDocument();
    act(() => {
      for (let i = 0; i < 12; i++)
        announceReveal({
          game: 'dice',
          betId: `r${String(i)}`,
          amount: 1,
          multiplier: i === 11 ? 0 : 2,
          payout: i === 11 ? 0 : 2,
        });
    });
    expect(pills()).toHaveLength(10);
    expect(pills()[0]).toBe('0.00x loss');
  });

  it('is not shown to a guest', async () => {
    gameApi({}, { user: null });
    renderApp('/games/dice');
    await screen.findByRole('button', { name: 'Roll Dice' });
    expect(screen.queryByRole('list', { name: 'Recent results' })).not.toBeInTheDocument();
  });
});
