import { screen, within } from '@testing-library/react';
import { gameApi } from '@/testing/game-api';
import { json } from '@/testing/mock-api';
import { renderApp } from '@/testing/test-utils';

const seeds = {
  serverSeedHash: 'a4e53dc2f480b8fce6fe688b1317658b446299df23ad533394406427c8c19557',
  clientSeed: 'client seed',
  nonce: 3,
};

// The dice vector: ("server seed", "client seed", nonce 1) rolls 74.67.
const bet = {
  _id: 'bet-1',
  game: 'dice',
  amount: 1,
  multiplier: 1.24,
  payout: 1.24,
  status: 'settled',
  createdAt: '2026-11-21T06:00:00Z',
  fairness: { ...seeds, serverSeed: 'server seed', nonce: 1 },
  params: '{"target": "80"}',
  outcome: '{"win": true, "roll": 74.67, "target": 80, "multiplier": 1.24}',
};

function api(extra: Parameters<typeof gameApi>[0] = {}) {
  return gameApi({
    'GET /api/fair/seeds': () => json({ seeds }),
    'GET /api/games/bets': () =>
      json({
        bets: [bet, { ...bet, _id: 'bet-2', fairness: { ...bet.fairness, serverSeed: '' } }],
        totalPages: 1,
        page: 1,
      }),
    'GET /api/games/bets/bet-1': () => json({ bet }),
    'GET /api/games/bets/bet-2': () =>
      json({ bet: { ...bet, _id: 'bet-2', fairness: { ...bet.fairness, serverSeed: '' } } }),
    'GET /api/fair/verify/bet-1': () =>
      json({
        game: 'dice',
        serverSeed: 'server seed',
        serverSeedHash: seeds.serverSeedHash,
        clientSeed: 'client seed',
        nonce: 1,
        params: bet.params,
        recorded: bet.outcome,
        recomputed: bet.outcome,
        matches: true,
      }),
    ...extra,
  });
}

async function openPanel() {
  const app = renderApp('/games/dice');
  await screen.findByLabelText('Bet Amount');
  await app.user.click(screen.getByRole('button', { name: 'Fairness' }));
  const dialog = await screen.findByRole('dialog', { name: 'Fairness' });
  return { ...app, dialog: within(dialog) };
}

describe('Fairness panel', () => {
  it('shows the active pair, saves a client seed and rotates', async () => {
    const server = api({
      'POST /api/fair/client-seed': () => json({ seeds: { ...seeds, clientSeed: 'lucky' } }),
      'POST /api/fair/rotate': () =>
        json({
          revealedServerSeed: 'server seed',
          previousServerSeedHash: seeds.serverSeedHash,
          previousClientSeed: 'lucky',
          previousNonce: 3,
          seeds: { serverSeedHash: 'ff'.repeat(32), clientSeed: 'lucky', nonce: 0 },
        }),
    });
    const { user, dialog } = await openPanel();
    expect(await dialog.findByText(seeds.serverSeedHash)).toBeInTheDocument();
    expect(dialog.getByText('3')).toBeInTheDocument();
    const input = dialog.getByLabelText('Client Seed');
    expect(input).toHaveValue('client seed');
    await user.clear(input);
    await user.type(input, 'lucky');
    await user.click(dialog.getByRole('button', { name: 'Save Client Seed' }));
    expect(await dialog.findByText('Client seed saved.')).toBeInTheDocument();
    expect(server.calls('POST /api/fair/client-seed')[0]?.body).toEqual({ clientSeed: 'lucky' });

    await user.click(dialog.getByRole('button', { name: 'Rotate Seed Pair' }));
    const revealed = within(await dialog.findByRole('region', { name: 'Previous seed pair' }));
    expect(revealed.getByText('server seed')).toBeInTheDocument();
    expect(revealed.getByText('lucky')).toBeInTheDocument();
    expect(server.calls('POST /api/fair/rotate')[0]?.body).toEqual({ clientSeed: '' });
  });

  it('shows a refused rotation', async () => {
    api({
      'POST /api/fair/rotate': () => json({ message: 'Finish your running game before rotating the seed pair' }, 409),
    });
    const { user, dialog } = await openPanel();
    await user.click(await dialog.findByRole('button', { name: 'Rotate Seed Pair' }));
    expect(await dialog.findByText('Finish your running game before rotating the seed pair')).toBeInTheDocument();
  });

  it('lists My Bets and verifies one in the browser next to the server', async () => {
    const server = api();
    const { user, dialog } = await openPanel();
    await user.click(dialog.getByRole('tab', { name: 'My Bets' }));
    const list = within(await dialog.findByRole('list', { name: 'My Bets' }));
    expect(list.getAllByRole('button')).toHaveLength(2);
    expect(dialog.getByText('Page 1 of 1')).toBeInTheDocument();
    expect(new URL(server.calls('GET /api/games/bets')[0]!.url, 'http://x').searchParams.get('page')).toBe('1');

    await user.click(list.getAllByRole('button')[0]!);
    expect(await dialog.findByText('✓ Verified in your browser: the result matches the record')).toBeInTheDocument();
    expect(dialog.getByText('74.67')).toBeInTheDocument();
    expect(await dialog.findByText('The server recomputes the same result')).toBeInTheDocument();

    await user.click(dialog.getByRole('button', { name: '← Back to My Bets' }));
    await user.click(within(await dialog.findByRole('list', { name: 'My Bets' })).getAllByRole('button')[1]!);
    expect(await dialog.findByText(/The server seed of this bet is still secret/)).toBeInTheDocument();
  });

  it('flags a recorded result that the seeds do not produce', async () => {
    const forged = { ...bet, outcome: '{"win": true, "roll": 12.34, "multiplier": 1.24}' };
    api({ 'GET /api/games/bets/bet-1': () => json({ bet: forged }) });
    const { user, dialog } = await openPanel();
    await user.click(dialog.getByRole('tab', { name: 'My Bets' }));
    await user.click(within(await dialog.findByRole('list', { name: 'My Bets' })).getAllByRole('button')[0]!);
    expect(await dialog.findByText('✗ Verification failed: differs in roll')).toBeInTheDocument();
  });
});
