import { screen, waitFor, within } from '@testing-library/react';
import { fairness, gameApi } from '@/testing/game-api';
import { json } from '@/testing/mock-api';
import { renderApp } from '@/testing/test-utils';

const notifications = () => within(screen.getByRole('region', { name: 'Notifications' }));
// The game's own figures, not the live bets table's column headers of the same name.
const stat = (label: string) => screen.getByText(label, { exact: true, ignore: 'th' }).parentElement!;

const started = {
  success: true,
  gameId: 'p1',
  newBalance: 1233.5,
  difficulty: 'medium',
  nextMultiplier: 1.11,
  fairness,
};
const pumped = (n: number, over: Record<string, unknown> = {}) => ({
  success: true,
  pumpCount: n,
  multiplier: [1, 1.11, 1.27][n] ?? 1.46,
  burst: false,
  newBalance: 1233.5,
  gameOver: false,
  winAmount: 0,
  potentialWin: 0,
  nextMultiplier: 1.27,
  pops: [],
  ...over,
});

async function open() {
  const app = renderApp('/games/pump');
  await screen.findByRole('heading', { level: 1, name: 'Pump' });
  await screen.findByLabelText('Bet Amount');
  return app;
}

describe('Pump', () => {
  it('starts, pumps, grows the balloon and cashes out', async () => {
    let pumps = 0;
    const server = gameApi({
      'POST /api/games/pump/start': () => json(started),
      'POST /api/games/pump/pump': () => json(pumped(++pumps)),
      'POST /api/games/pump/cashout': () =>
        json({ success: true, winAmount: 1.27, newBalance: 1234.77, multiplier: 1.27, pumpCount: 2, pops: [3, 9, 20] }),
    });
    const { user } = await open();
    expect(screen.getByText('Place your bet and start pumping')).toBeInTheDocument();
    expect(screen.getByLabelText('Difficulty')).toHaveValue('medium');
    expect(
      within(screen.getByLabelText('Difficulty'))
        .getAllByRole('option')
        .map((o) => o.textContent),
    ).toEqual(['Easy', 'Medium', 'Hard', 'Expert']);
    const balloon = document.querySelector('[data-size]');
    expect(balloon).toHaveAttribute('data-size', '50');

    await user.click(screen.getByRole('button', { name: 'Start Game' }));
    expect(await screen.findByRole('button', { name: 'Pump' })).toBeEnabled();
    expect(screen.getByRole('button', { name: 'Cash Out' })).toBeDisabled();
    expect(screen.getByLabelText('Difficulty')).toBeDisabled();
    expect(screen.getByLabelText('Bet Amount')).toBeDisabled();
    expect(screen.getByRole('button', { name: '½' })).toBeDisabled();
    expect(screen.getByText('Potential win:')).toHaveTextContent('Potential win: $1.00');
    expect(server.calls('POST /api/games/pump/start')[0]?.body).toEqual({ betAmount: 1, difficulty: 'medium' });

    await user.click(screen.getByRole('button', { name: 'Pump' }));
    await within(stat('Pumps')).findByText('1');
    await user.click(screen.getByRole('button', { name: 'Pump' }));
    await within(stat('Pumps')).findByText('2');
    expect(within(stat('Multiplier')).getByText('1.27x')).toBeInTheDocument();
    expect(document.querySelector('[data-size]')).toHaveAttribute('data-size', '60');
    expect(screen.getByText('Potential win:')).toHaveTextContent('Potential win: $1.27');

    await user.click(screen.getByRole('button', { name: 'Cash Out' }));
    expect(await screen.findByText('Success! You won $1.27')).toBeInTheDocument();
    expect(screen.getByTestId('balance')).toHaveTextContent('$1,234.77');
    expect(screen.getByRole('button', { name: 'Start Game' })).toBeEnabled();
  });

  it('bursts with a red balloon', async () => {
    gameApi({
      'POST /api/games/pump/start': () => json(started),
      'POST /api/games/pump/pump': () =>
        json(pumped(0, { burst: true, multiplier: 0, gameOver: true, newBalance: 1233.5, pops: [1, 5, 9] })),
    });
    const { user } = await open();
    await user.click(screen.getByRole('button', { name: 'Start Game' }));
    await user.click(await screen.findByRole('button', { name: 'Pump' }));
    expect(await screen.findByText('Balloon Burst!')).toHaveTextContent('Balloon Burst! Win: $0.00');
    expect(screen.getByRole('button', { name: 'Start Game' })).toBeEnabled();
  });

  it('keeps the balance when a burst carries no newBalance', async () => {
    const burst: Record<string, unknown> = pumped(0, { burst: true, multiplier: 0, gameOver: true, pops: [1, 5, 9] });
    delete burst.newBalance;
    gameApi({
      'POST /api/games/pump/start': () => json(started),
      'POST /api/games/pump/pump': () => json(burst),
    });
    const { user } = await open();
    await user.click(screen.getByRole('button', { name: 'Start Game' }));
    await user.click(await screen.findByRole('button', { name: 'Pump' }));
    expect(await screen.findByText('Balloon Burst!')).toBeInTheDocument();
    // The start took the stake: 1,234.50 − 1 = 1,233.50, and it stays.
    expect(screen.getByTestId('balance')).toHaveTextContent('$1,233.50');
  });

  it('shows the server message or the fallback of each step', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const server = gameApi({
      'POST /api/games/pump/start': () => json({ message: 'You already have a game in progress' }, 409),
    });
    const { user } = await open();
    await user.click(screen.getByRole('button', { name: 'Start Game' }));
    expect(await notifications().findByText('You already have a game in progress')).toBeInTheDocument();

    server.on('POST /api/games/pump/start', () => json({}, 500));
    await user.click(screen.getByRole('button', { name: 'Start Game' }));
    expect(await notifications().findByText('Failed to start game')).toBeInTheDocument();

    server.on('POST /api/games/pump/start', () => json(started));
    server.on('POST /api/games/pump/pump', () => new Response(null, { status: 502 }));
    server.on('POST /api/games/pump/cashout', () => new Response(null, { status: 502 }));
    await user.click(screen.getByRole('button', { name: 'Start Game' }));
    await user.click(await screen.findByRole('button', { name: 'Pump' }));
    expect(await notifications().findByText('Failed to pump balloon')).toBeInTheDocument();
  });

  it('resumes a running game and cashes it out, or reports the failure', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    gameApi({
      'GET /api/games/active': () =>
        json({
          mines: null,
          blackjack: null,
          pump: {
            gameId: 'p7',
            betAmount: 2,
            difficulty: 'hard',
            pumpCount: 3,
            multiplier: 1.98,
            potentialWin: 3.96,
            nextMultiplier: 2.56,
            fairness,
          },
        }),
      'POST /api/games/pump/cashout': () => json({}, 500),
    });
    const { user } = await open();
    await user.click(await screen.findByRole('button', { name: 'Cash Out' }));
    expect(await notifications().findByText('Failed to cash out')).toBeInTheDocument();
    expect(screen.getByLabelText('Difficulty')).toHaveValue('hard');
    expect(within(stat('Pumps')).getByText('3')).toBeInTheDocument();
    expect(screen.getByText('Potential win:')).toHaveTextContent('$3.96');
  });
});

describe('Pump hotkeys', () => {
  it('Space starts, P pumps and C cashes out, one request at a time', { timeout: 20000 }, async () => {
    window.localStorage.setItem('fairplay.hotkeys', 'on');
    let pumps = 0;
    const server = gameApi({
      'POST /api/games/pump/start': () => json(started),
      'POST /api/games/pump/pump': () => json(pumped(++pumps)),
      'POST /api/games/pump/cashout': () =>
        json({ success: true, winAmount: 1.27, newBalance: 1234.77, multiplier: 1.27, pumpCount: 1, pops: [3, 9, 20] }),
    });
    const { user } = await open();
    await user.keyboard(' ');
    expect(await screen.findByRole('button', { name: 'Pump' })).toBeInTheDocument();
    (document.activeElement as HTMLElement | null)?.blur();
    await user.keyboard('p');
    await waitFor(() => {
      expect(screen.getByRole('button', { name: 'Cash Out' })).toBeEnabled();
    });
    await user.keyboard('c');
    await waitFor(() => {
      expect(server.calls('POST /api/games/pump/cashout')).toHaveLength(1);
    });
    expect(server.calls('POST /api/games/pump/start')).toHaveLength(1);
    expect(server.calls('POST /api/games/pump/pump')).toHaveLength(1);
  });
});
