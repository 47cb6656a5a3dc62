import { act, screen, within } from '@testing-library/react';
import { fairness, gameApi } from '@/testing/game-api';
import { json, type RecordedRequest } from '@/testing/mock-api';
import { renderApp } from '@/testing/test-utils';

const SERVER_SEED_HASH = 'a4e53dc2f480b8fce6fe688b1317658b446299df23ad533394406427c8c19557';

// The dice vector: ("server seed", "client seed", nonce 1) rolls 74.67.
const revealed = {
  _id: 'bet-1',
  game: 'dice',
  amount: 1,
  multiplier: 1.24,
  payout: 1.24,
  status: 'settled',
  createdAt: '2026-11-21T06:00:00Z',
  fairness: { serverSeedHash: SERVER_SEED_HASH, serverSeed: 'server seed', clientSeed: 'client seed', nonce: 1 },
  params: '{"target": "80"}',
  outcome: '{"win": true, "roll": 74.67, "target": 80, "multiplier": 1.24}',
};

function bet(i: number, game = 'keno') {
  return {
    ...revealed,
    _id: `bet-${String(i)}`,
    game,
    amount: i,
    multiplier: 0,
    payout: 0,
    fairness: { ...fairness, nonce: i },
  };
}

const query = (req: RecordedRequest) => new URL(req.url, 'http://localhost').searchParams;

function historyApi() {
  return gameApi({
    'GET /api/games/bets': (req) => {
      const q = query(req);
      const page = Number(q.get('page'));
      const game = q.get('game');
      if (game === 'dice') return json({ bets: [revealed], totalPages: 1, page: 1 });
      if (game) return json({ bets: [], totalPages: 0, page: 1 });
      const bets = page === 1 ? [revealed, ...Array.from({ length: 19 }, (_, i) => bet(i + 2))] : [bet(21), bet(22)];
      return json({ bets, totalPages: 2, page });
    },
    'GET /api/games/bets/bet-1': () => json({ bet: revealed }),
    'GET /api/games/bets/bet-5': () => json({ bet: bet(5) }),
    'GET /api/fair/verify/bet-1': () =>
      json({
        game: 'dice',
        serverSeed: 'server seed',
        serverSeedHash: SERVER_SEED_HASH,
        clientSeed: 'client seed',
        nonce: 1,
        params: revealed.params,
        recorded: revealed.outcome,
        recomputed: revealed.outcome,
        matches: true,
      }),
  });
}

describe('My Bets page', () => {
  it('asks a guest to sign in', async () => {
    gameApi({}, { user: null });
    renderApp('/bets');
    expect(await screen.findByRole('heading', { level: 1, name: 'My Bets' })).toBeInTheDocument();
    const main = within(screen.getByRole('main'));
    expect(main.getByText(/Sign in to see your bets/)).toBeInTheDocument();
    expect(main.getByRole('button', { name: 'Sign In' })).toBeInTheDocument();
  });

  it('lists the bets newest first and loads more on demand', async () => {
    const server = historyApi();
    const { user } = renderApp('/bets');
    expect(await screen.findByRole('heading', { level: 1, name: 'My Bets' })).toBeInTheDocument();
    const table = await screen.findByRole('table', { name: 'Your bets, newest first' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(20);
    expect(within(rows[0]!).getByRole('button', { name: /^Dice bet/ })).toBeInTheDocument();
    expect(within(rows[0]!).getByText('1.24x')).toBeInTheDocument();
    expect(within(rows[0]!).getAllByText('$1.24')).toHaveLength(1);
    expect(query(server.calls('GET /api/games/bets')[0]!).toString()).toBe('page=1&limit=20');

    await user.click(screen.getByRole('button', { name: 'Load more' }));
    expect(await within(table).findByText('$22.00')).toBeInTheDocument();
    expect(within(table).getAllByRole('row')).toHaveLength(23);
    expect(query(server.calls('GET /api/games/bets')[1]!).get('page')).toBe('2');
    expect(screen.getByText("That's all: 22 bets.")).toBeInTheDocument();
  });

  it('loads the next batch when the end of the list scrolls into view', async () => {
    const observers: { callback: IntersectionObserverCallback; target?: Element; live: boolean }[] = [];
    vi.stubGlobal(
      'IntersectionObserver',
      class {
        entry: (typeof observers)[number];
        constructor(callback: IntersectionObserverCallback) {
          this.entry = { callback, live: true };
          observers.push(this.entry);
        }
        observe(target: Element) {
          this.entry.target = target;
        }
        disconnect() {
          this.entry.live = false;
        }
      },
    );
    const server = historyApi();
    renderApp('/bets');
    const table = await screen.findByRole('table', { name: 'Your bets, newest first' });
    const watching = observers.filter((o) => o.live && o.target);
    expect(watching).toHaveLength(1);
    act(() => {
      const { callback, target } = watching[0]!;
      callback([{ isIntersecting: true, target } as IntersectionObserverEntry], {} as IntersectionObserver);
    });
    expect(await within(table).findByText('$22.00')).toBeInTheDocument();
    expect(query(server.calls('GET /api/games/bets')[1]!).get('page')).toBe('2');
    // The last page is in: nothing is watched any more.
    expect(observers.filter((o) => o.live)).toHaveLength(0);
  });

  it('filters by game through the address', async () => {
    const server = historyApi();
    const { user, router } = renderApp('/bets');
    await screen.findByRole('table', { name: 'Your bets, newest first' });
    await user.selectOptions(screen.getByLabelText('Game'), 'dice');
    const table = await screen.findByRole('table', { name: 'Your Dice bets, newest first' });
    expect(within(table).getAllByRole('row')).toHaveLength(2);
    expect(router.state.location.search).toBe('?game=dice');
    expect(query(server.calls('GET /api/games/bets').at(-1)!).get('game')).toBe('dice');
    await user.selectOptions(screen.getByLabelText('Game'), 'mines');
    expect(await screen.findByText('No Mines bets yet. Place a bet to see it here.')).toBeInTheDocument();
  });

  it('opens a bet from its link and verifies it in the browser and on the server', async () => {
    historyApi();
    const { user, router } = renderApp('/bets?bet=bet-1');
    const dialog = within(await screen.findByRole('dialog', { name: 'Bet details' }));
    expect(
      await dialog.findByText('✓ Verified in your browser: the result matches the record', {}, { timeout: 10000 }),
    ).toBeInTheDocument();
    expect(await dialog.findByText('The server recomputes the same result')).toBeInTheDocument();
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(router.state.location.search).toBe('');
  });

  it('reveals a secret seed in one click, then verifies', async () => {
    const server = historyApi();
    let rotated = false;
    server.on('GET /api/games/bets/bet-5', () =>
      json({
        bet: rotated
          ? { ...revealed, _id: 'bet-5' }
          : { ...bet(5), fairness: { ...revealed.fairness, serverSeed: '' } },
      }),
    );
    server.on('GET /api/fair/verify/bet-5', () =>
      json({
        game: 'dice',
        serverSeed: 'server seed',
        serverSeedHash: SERVER_SEED_HASH,
        clientSeed: 'client seed',
        nonce: 1,
        params: revealed.params,
        recorded: revealed.outcome,
        recomputed: revealed.outcome,
        matches: true,
      }),
    );
    server.on('POST /api/fair/rotate', () => {
      rotated = true;
      return json({
        revealedServerSeed: 'server seed',
        previousServerSeedHash: SERVER_SEED_HASH,
        previousClientSeed: 'client seed',
        previousNonce: 5,
        seeds: { serverSeedHash: 'ff'.repeat(32), clientSeed: 'client seed', nonce: 0 },
      });
    });
    const { user } = renderApp('/bets');
    const table = await screen.findByRole('table', { name: 'Your bets, newest first' });
    await user.click(within(table).getAllByRole('button', { name: /^Keno bet/ })[3]!);
    const dialog = within(await screen.findByRole('dialog', { name: 'Bet details' }));
    await user.click(await dialog.findByRole('button', { name: 'Reveal the seed and verify' }));
    expect(server.calls('POST /api/fair/rotate')[0]?.body).toEqual({ clientSeed: '' });
    expect(
      await dialog.findByText('✓ Verified in your browser: the result matches the record', {}, { timeout: 10000 }),
    ).toBeInTheDocument();
  });

  it('says so when the history cannot be read', async () => {
    historyApi().on('GET /api/games/bets', () => json({ message: 'Server error' }, 500));
    renderApp('/bets');
    expect(await screen.findByText('Server error')).toBeInTheDocument();
  });
});
