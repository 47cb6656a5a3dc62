import { useMutation } from '@tanstack/react-query';
import { act, screen, waitFor, within } from '@testing-library/react';
import { useEffect, useState } from 'react';
import { useUser } from '@/lib/auth';
import { announceReveal, holdBet, resetReveals } from '@/lib/reveals';
import { installEventSource, openStreams, type FakeEventSource } from '@/testing/event-source';
import { fairness, gameApi } from '@/testing/game-api';
import { deferred, json } from '@/testing/mock-api';
import { player, renderApp, renderWithProviders } from '@/testing/test-utils';
import { LiveBets } from './live-bets';

function live(id: string, extra: Record<string, unknown> = {}) {
  return {
    _id: id,
    game: 'plinko',
    username: 'bob',
    hidden: false,
    amount: 2,
    multiplier: 1.5,
    payout: 3,
    settledAt: '2026-11-24T05:00:00Z',
    ...extra,
  };
}

function send(es: FakeEventSource | undefined, ...bets: ReturnType<typeof live>[]) {
  act(() => {
    es?.emit('bets', JSON.stringify({ bets }));
  });
}

const table = (name: string) => within(screen.getByRole('table', { name }));

async function open() {
  const app = renderApp('/games/dice');
  await screen.findByRole('button', { name: 'Roll Dice' });
  await screen.findByRole('table', { name: 'All bets' });
  // The table's stream opens in an effect, which may run just after the table is drawn.
  await waitFor(() => {
    expect(openStreams()).toHaveLength(1);
  });
  return app;
}

afterEach(() => {
  resetReveals();
});

describe('Live bets', () => {
  it('streams every bet with hidden players as Hidden, and the high rollers on their own stream', async () => {
    const ES = installEventSource();
    gameApi({}, { user: null });
    const { user } = await open();
    const [es] = openStreams();
    expect(es?.url).toBe('/api/live/bets');
    expect(table('All bets').getByText('Waiting for bets…')).toBeInTheDocument();

    send(es, live('a'), live('b', { username: '', hidden: true, game: 'keno', amount: 150, payout: 0, multiplier: 0 }));
    const rows = table('All bets').getAllByRole('row').slice(1);
    expect(rows).toHaveLength(2);
    expect(within(rows[0]!).getByRole('link', { name: 'Keno' })).toHaveAttribute('href', '/games/keno');
    expect(within(rows[0]!).getByText('Hidden')).toBeInTheDocument();
    expect(within(rows[0]!).getByText('$150.00')).toBeInTheDocument();
    expect(within(rows[0]!).getByText('0.00x')).toBeInTheDocument();
    expect(within(rows[1]!).getByText('bob')).toBeInTheDocument();
    expect(within(rows[1]!).getByText('1.50x')).toBeInTheDocument();
    expect(within(rows[1]!).getByText('$3.00')).toBeInTheDocument();

    await user.click(screen.getByRole('tab', { name: 'High rollers' }));
    expect(es?.closed).toBe(true);
    const streams = openStreams();
    expect(streams.map((s) => s.url)).toEqual(['/api/live/bets?minAmount=100']);
    send(streams[0], live('c', { amount: 500 }));
    expect(table('High rollers').getByText('$500.00')).toBeInTheDocument();
    expect(ES.instances).toHaveLength(2);
  });

  it('keeps a bet whose result its player has not seen off the table until the reveal', async () => {
    installEventSource();
    gameApi();
    await open();
    const [es] = openStreams();
    act(() => {
      holdBet('mine');
    });
    send(es, live('mine', { username: 'alice' }), live('other'));
    expect(table('All bets').getAllByRole('row')).toHaveLength(2);
    expect(table('All bets').queryByText('alice')).not.toBeInTheDocument();
    act(() => {
      announceReveal({ game: 'plinko', betId: 'mine', amount: 2, multiplier: 1.5, payout: 3 });
    });
    const rows = table('All bets').getAllByRole('row').slice(1);
    expect(within(rows[0]!).getByText('alice')).toBeInTheDocument();
  });

  it('keeps back a bet that could be the player’s while one of their requests is under way', async () => {
    installEventSource();
    const response = deferred<Response>();
    gameApi({ 'POST /api/games/dice': () => response.promise });
    const { user } = await open();
    const [es] = openStreams();
    await user.click(screen.getByRole('button', { name: 'Roll Dice' }));
    send(es, live('from-alice', { username: 'alice' }), live('from-bob'));
    expect(table('All bets').queryByText('alice')).not.toBeInTheDocument();
    expect(table('All bets').getByText('bob')).toBeInTheDocument();
    response.resolve(
      json({ result: 20, isWin: true, winAmount: 1.98, newBalance: 1235.48, multiplier: 1.98, betId: 'b1', fairness }),
    );
    expect(await table('All bets').findByText('alice')).toBeInTheDocument();
  });

  it('keeps it back when the game holds it just after its request ended', async () => {
    installEventSource();
    gameApi();
    const response = deferred<string>();
    // A game that holds its bet in an effect of its answer, which runs after the request is marked done.
    function Game() {
      const play = useMutation({ mutationFn: () => response.promise });
      const name = useUser().data?.username;
      const betId = play.data;
      useEffect(() => {
        if (betId) holdBet(betId);
      }, [betId]);
      return (
        <button
          type="button"
          onClick={() => {
            play.mutate();
          }}
        >
          {`Play as ${name ?? '…'}`}
        </button>
      );
    }
    const { user } = renderWithProviders(
      <>
        <Game />
        <LiveBets />
      </>,
    );
    await screen.findByRole('table', { name: 'All bets' });
    const [es] = openStreams();
    // The player is known: their name is what makes a floor bet possibly theirs.
    await user.click(await screen.findByRole('button', { name: 'Play as alice' }));
    send(es, live('mine', { username: 'alice' }));
    await act(async () => {
      response.resolve('mine');
      await new Promise((r) => setTimeout(r, 400));
    });
    expect(table('All bets').queryByText('alice')).not.toBeInTheDocument();
    act(() => {
      announceReveal({ game: 'plinko', betId: 'mine', amount: 2, multiplier: 1.5, payout: 3 });
    });
    expect(table('All bets').getByText('alice')).toBeInTheDocument();
  });

  it('lets the bet out at its reveal although a game with a request hook has just drawn again', async () => {
    installEventSource();
    gameApi();
    // A game that redraws (its mutation hook's options change at each render) but sends nothing.
    function Game() {
      const play = useMutation({ mutationFn: () => Promise.resolve('') });
      const name = useUser().data?.username;
      const [draws, setDraws] = useState(0);
      return (
        <button
          type="button"
          disabled={play.isPending}
          onClick={() => {
            setDraws((n) => n + 1);
          }}
        >
          {`Drawn ${draws} times for ${name ?? '…'}`}
        </button>
      );
    }
    const { user } = renderWithProviders(
      <>
        <Game />
        <LiveBets />
      </>,
    );
    await screen.findByRole('table', { name: 'All bets' });
    await user.click(await screen.findByRole('button', { name: 'Drawn 0 times for alice' }));
    const [es] = openStreams();
    act(() => {
      holdBet('mine');
    });
    send(es, live('mine', { username: 'alice' }));
    await user.click(screen.getByRole('button', { name: 'Drawn 1 times for alice' }));
    expect(table('All bets').queryByText('alice')).not.toBeInTheDocument();
    act(() => {
      announceReveal({ game: 'plinko', betId: 'mine', amount: 2, multiplier: 1.5, payout: 3 });
    });
    expect(table('All bets').getByText('alice')).toBeInTheDocument();
  });

  it('lists the player’s own bets from the history and each reveal', async () => {
    installEventSource();
    const server = gameApi({
      'GET /api/games/bets': () =>
        json({
          bets: [
            {
              _id: 'h1',
              game: 'keno',
              amount: 4,
              multiplier: 0,
              payout: 0,
              status: 'settled',
              createdAt: '2026-11-24T04:00:00Z',
              fairness,
              params: '{}',
              outcome: '{}',
            },
          ],
          totalPages: 1,
          page: 1,
        }),
    });
    const { user, unmount } = await open();
    await user.click(screen.getByRole('tab', { name: 'My bets' }));
    expect(openStreams()).toHaveLength(0);
    expect(await table('My bets').findByText('$4.00')).toBeInTheDocument();
    const call = server
      .calls('GET /api/games/bets')
      .find((c) => new URL(c.url, 'http://x').searchParams.get('limit') === '20');
    expect(call && new URL(call.url, 'http://x').searchParams.get('game')).toBeNull();
    act(() => {
      announceReveal({ game: 'dice', betId: 'r1', amount: 7, multiplier: 2, payout: 14 });
    });
    const rows = table('My bets').getAllByRole('row').slice(1);
    expect(rows).toHaveLength(2);
    expect(within(rows[0]!).getByText('$14.00')).toBeInTheDocument();
    expect(within(rows[0]!).getByText('alice')).toBeInTheDocument();
    unmount();
    expect(openStreams()).toHaveLength(0);
  });

  it('opens one stream for a signed-in player, once their account is known', async () => {
    const ES = installEventSource();
    const answer = deferred<Response>();
    gameApi({ 'GET /api/auth/user': () => answer.promise });
    renderApp('/games/dice');
    // The panels under the game are drawn (after the first paint) while the account is still unknown.
    await screen.findByRole('button', { name: 'Live stats' });
    expect(ES.instances).toHaveLength(0);
    await act(async () => {
      answer.resolve(json({ user: player }));
      await answer.promise;
    });
    await screen.findByRole('table', { name: 'All bets' });
    await waitFor(() => {
      expect(openStreams()).toHaveLength(1);
    });
    // Not a guest's stream closed and another opened for the player.
    expect(ES.instances).toHaveLength(1);
  });

  it('closes its stream when the screen goes', async () => {
    installEventSource();
    gameApi();
    const { unmount } = await open();
    expect(openStreams()).toHaveLength(1);
    unmount();
    expect(openStreams()).toHaveLength(0);
  });
});
