import { screen, waitFor, within } from '@testing-library/react';
import { fairness, gameApi } from '@/testing/game-api';
import { json } from '@/testing/mock-api';
import { renderApp } from '@/testing/test-utils';

const notifications = () => within(screen.getByRole('region', { name: 'Notifications' }));
const board = () => within(screen.getByRole('group', { name: 'Keno numbers' }));
const number = (n: number) => board().getByRole('button', { name: String(n) });

const drawn = (over: Record<string, unknown> = {}) => ({
  success: true,
  drawnNumbers: [30, 26, 10, 37, 22, 35, 25, 24, 39, 4],
  matches: [30, 26],
  winAmount: 3.1,
  newBalance: 1236.6,
  multiplier: 3.1,
  betId: 'k1',
  fairness,
  ...over,
});

async function open() {
  const app = renderApp('/games/keno');
  await screen.findByRole('heading', { level: 1, name: 'Keno' });
  await screen.findByLabelText('Bet Amount');
  return app;
}

describe('Keno', () => {
  it('has 40 numbers, the risk levels and the payout table', async () => {
    gameApi();
    const { user } = await open();
    expect(board().getAllByRole('button')).toHaveLength(40);
    expect(screen.getByText('0/10')).toBeInTheDocument();
    const risk = within(screen.getByRole('group', { name: 'Risk Level' }));
    expect(risk.getAllByRole('button').map((b) => b.textContent)).toEqual(['Classic', 'Low', 'Medium', 'High']);
    expect(risk.getByRole('button', { name: 'Classic' })).toHaveAttribute('aria-pressed', 'true');

    const table = screen.getByRole('table', { name: 'Payout Table' });
    const rows = within(table).getAllByRole('row');
    expect(rows).toHaveLength(11);
    expect(
      within(rows[0]!)
        .getAllByRole('columnheader')
        .map((c) => c.textContent),
    ).toEqual(['Picks', ...Array.from({ length: 11 }, (_, i) => String(i))]);
    expect(
      within(rows[1]!)
        .getAllByRole('cell')
        .slice(0, 2)
        .map((c) => c.textContent),
    ).toEqual(['-', '3.96x']);
    await user.click(risk.getByRole('button', { name: 'High' }));
    expect(within(within(table).getAllByRole('row')[3]!).getAllByRole('cell')[3]).toHaveTextContent('81.50x');
  });

  it('selects up to ten numbers and toggles them off', { timeout: 30000 }, async () => {
    gameApi();
    const { user } = await open();
    for (let n = 1; n <= 11; n++) await user.click(number(n));
    expect(screen.getByText('10/10')).toBeInTheDocument();
    expect(number(11)).toHaveAttribute('aria-pressed', 'false');
    await user.click(number(3));
    expect(number(3)).toHaveAttribute('aria-pressed', 'false');
    expect(screen.getByText('9/10')).toBeInTheDocument();
    // Auto Pick picks the Pick Count (10 by default) at random, replacing the selection; Clear empties it.
    await user.click(screen.getByRole('button', { name: 'Auto Pick' }));
    expect(board().getAllByRole('button', { pressed: true })).toHaveLength(10);
    const count = screen.getByLabelText('Pick Count');
    await user.clear(count);
    await user.type(count, '4');
    await user.click(screen.getByRole('button', { name: 'Auto Pick' }));
    expect(board().getAllByRole('button', { pressed: true })).toHaveLength(4);
    expect(screen.getByText('4/10')).toBeInTheDocument();
    await user.clear(count);
    await user.type(count, '11');
    expect(screen.getByRole('button', { name: 'Auto Pick' })).toBeDisabled();
    await user.click(screen.getByRole('button', { name: 'Clear' }));
    expect(board().queryAllByRole('button', { pressed: true })).toHaveLength(0);
    expect(screen.getByRole('button', { name: 'Clear' })).toBeDisabled();
  });

  it('asks guests to log in before checking the numbers', async () => {
    gameApi({}, { user: null });
    const { user } = await open();
    await user.click(screen.getByRole('button', { name: 'Draw Numbers' }));
    expect(await notifications().findByText('Please login to play')).toBeInTheDocument();
  });

  it('asks for numbers first', async () => {
    const server = gameApi();
    const { user } = await open();
    await user.click(screen.getByRole('button', { name: 'Draw Numbers' }));
    expect(await notifications().findByText('Please select at least one number')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Auto Pick' }));
    expect(screen.getByText('10/10')).toBeInTheDocument();
    expect(server.calls('POST /api/games/keno')).toHaveLength(0);
  });

  it('keeps the balance and the win hidden until the last number flips', { timeout: 20000 }, async () => {
    gameApi({ 'POST /api/games/keno': () => json(drawn()) });
    const { user } = await open();
    await screen.findByText('$1,234.50');
    for (const n of [30, 26, 1]) await user.click(number(n));
    await user.click(screen.getByRole('button', { name: 'Draw Numbers' }));
    // The response is in: the numbers flip, Play Again waits for the last one.
    expect(await screen.findByRole('button', { name: 'Play Again' })).toBeDisabled();
    expect(screen.getByTestId('balance')).toHaveTextContent('$1,233.50');
    expect(screen.queryByText('Win: $3.10')).not.toBeInTheDocument();
    expect(await screen.findByText('Win: $3.10', undefined, { timeout: 6000 })).toBeInTheDocument();
    expect(screen.getByTestId('balance')).toHaveTextContent('$1,236.60');
  });

  it('draws, reveals and pays; then plays again, edits and resets', { timeout: 20000 }, async () => {
    const server = gameApi({ 'POST /api/games/keno': () => json(drawn()) });
    const { user } = await open();
    for (const n of [30, 26, 1]) await user.click(number(n));
    await user.click(screen.getByRole('button', { name: 'Draw Numbers' }));
    expect(await screen.findByText('Win: $3.10', undefined, { timeout: 6000 })).toBeInTheDocument();
    expect(server.calls('POST /api/games/keno')[0]?.body).toEqual({
      betAmount: 1,
      selectedNumbers: [30, 26, 1],
      riskLevel: 'classic',
    });
    expect(screen.getByTestId('balance')).toHaveTextContent('$1,236.60');
    expect(number(30).className).toMatch(/match/);
    expect(number(10).className).toMatch(/miss/);
    // Numbers are locked while the round is shown.
    await user.click(number(5));
    expect(number(5)).toHaveAttribute('aria-pressed', 'false');

    server.on('POST /api/games/keno', () => json(drawn({ matches: [], winAmount: 0, multiplier: 0, betId: 'k2' })));
    await user.click(screen.getByRole('button', { name: 'Play Again' }));
    expect(await screen.findByText('No win', undefined, { timeout: 6000 })).toBeInTheDocument();
    expect(server.calls('POST /api/games/keno')[1]?.body).toMatchObject({ selectedNumbers: [30, 26, 1] });

    await user.click(screen.getByRole('button', { name: 'Edit' }));
    await user.click(number(5));
    expect(screen.getByText('4/10')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.getByText('3/10')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Edit' }));
    await user.click(number(5));
    expect(screen.getByRole('button', { name: 'Play With Selected Numbers' })).toBeEnabled();

    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    await user.click(screen.getByRole('button', { name: 'Reset' }));
    expect(screen.getByText('0/10')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Draw Numbers' })).toBeInTheDocument();
  });

  it('resets the round when the draw fails', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    gameApi({ 'POST /api/games/keno': () => json({ message: 'nope' }, 500) });
    const { user } = await open();
    await user.click(number(7));
    await user.click(screen.getByRole('button', { name: 'Draw Numbers' }));
    expect(await notifications().findByText('Something went wrong. Please try again.')).toBeInTheDocument();
    await waitFor(() => {
      expect(screen.getByRole('button', { name: 'Draw Numbers' })).toBeEnabled();
    });
    expect(number(7)).toHaveAttribute('aria-pressed', 'true');
  });
});

describe('Keno autobet and hotkeys', () => {
  it('draws with the same numbers until the stop on loss, one draw at a time', { timeout: 30000 }, async () => {
    let n = 0;
    const server = gameApi({
      'POST /api/games/keno': () => {
        n++;
        return json({
          drawnNumbers: [31, 32, 33, 34, 35, 36, 37, 38, 39, 40],
          matches: [],
          multiplier: 0,
          winAmount: 0,
          newBalance: 1234.5 - n,
          betId: `k${String(n)}`,
          fairness,
        });
      },
    });
    const { user } = await open();
    await screen.findByText('$1,234.50');
    for (const k of [1, 2]) await user.click(number(k));
    await user.click(screen.getByRole('tab', { name: 'Auto' }));
    const bets = screen.getByLabelText('Number of Bets');
    await user.clear(bets);
    await user.type(bets, '0');
    await user.type(screen.getByLabelText('Stop on Loss'), '2');
    await user.click(screen.getByRole('button', { name: 'Start Autobet' }));
    expect(
      await screen.findByText('Autobet stopped: net loss $2.00 reached the stop on loss.', undefined, {
        timeout: 20000,
      }),
    ).toBeInTheDocument();
    expect(server.calls('POST /api/games/keno').map((c) => c.body)).toEqual([
      { betAmount: 1, selectedNumbers: [1, 2], riskLevel: 'classic' },
      { betAmount: 1, selectedNumbers: [1, 2], riskLevel: 'classic' },
    ]);
  });

  it('R auto-picks and X clears when the hotkeys are on', { timeout: 20000 }, async () => {
    gameApi();
    window.localStorage.setItem('fairplay.hotkeys', 'on');
    const { user } = await open();
    await user.keyboard('r');
    expect(board().getAllByRole('button', { pressed: true })).toHaveLength(10);
    await user.keyboard('x');
    expect(board().queryAllByRole('button', { pressed: true })).toHaveLength(0);
  });
});
