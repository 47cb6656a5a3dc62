import { fireEvent, screen, within } from '@testing-library/react';
import axe from 'axe-core';
import { fairness, gameApi } from '@/testing/game-api';
import { deferred, json } from '@/testing/mock-api';
import { renderApp } from '@/testing/test-utils';

const notifications = () => within(screen.getByRole('region', { name: 'Notifications' }));

async function open() {
  const app = renderApp('/games/dice');
  await screen.findByRole('heading', { level: 1, name: 'Dice' });
  await screen.findByRole('button', { name: 'Roll Dice' });
  return app;
}

describe('Dice', () => {
  it('shows the controls with their defaults and the empty state', async () => {
    gameApi();
    await open();
    expect(screen.getByLabelText('Bet Amount')).toHaveValue(1);
    expect(screen.getByLabelText('Bet Amount')).toHaveAttribute('min', '0.1');
    expect(screen.getByLabelText('Bet Amount')).toHaveAttribute('step', '0.1');
    const slider = screen.getByLabelText('Roll Under');
    expect(slider).toHaveValue('50');
    expect(slider).toHaveAttribute('min', '2');
    expect(slider).toHaveAttribute('max', '98');
    expect(slider).toHaveAttribute('step', '0.1');
    expect(screen.getByText('1.98x')).toBeInTheDocument();
    expect(screen.getByText('50.0%')).toBeInTheDocument();
    expect(screen.getByText('Place a bet and roll the dice to see your result.')).toBeInTheDocument();

    fireEvent.change(slider, { target: { value: '25' } });
    expect(screen.getByText('3.96x')).toBeInTheDocument();
    expect(screen.getByText('25.0%')).toBeInTheDocument();
  });

  it('asks guests to log in', async () => {
    gameApi({}, { user: null });
    const { user } = await open();
    await user.click(screen.getByRole('button', { name: 'Roll Dice' }));
    expect(await notifications().findByText('Please login to play')).toBeInTheDocument();
  });

  it('checks the bet, then the balance', async () => {
    const server = gameApi();
    const { user } = await open();
    await screen.findByText('$1,234.50');
    const bet = screen.getByLabelText('Bet Amount');
    await user.clear(bet);
    await user.type(bet, 'abc');
    await user.click(screen.getByRole('button', { name: 'Roll Dice' }));
    expect(await notifications().findByText('Please enter a valid bet amount')).toBeInTheDocument();
    await user.clear(bet);
    await user.type(bet, '5000');
    await user.click(screen.getByRole('button', { name: 'Roll Dice' }));
    expect(await notifications().findByText('Insufficient balance')).toBeInTheDocument();
    expect(server.calls('POST /api/games/dice')).toHaveLength(0);
  });

  it('halves and doubles the bet without a floor', async () => {
    gameApi();
    const { user } = await open();
    const bet = screen.getByLabelText('Bet Amount');
    fireEvent.change(bet, { target: { value: '0.1' } });
    await user.click(screen.getByRole('button', { name: '½' }));
    expect(bet).toHaveValue(0.05);
    await user.click(screen.getByRole('button', { name: '2×' }));
    await user.click(screen.getByRole('button', { name: '2×' }));
    expect(bet).toHaveValue(0.2);
  });

  it('rolls, shows the result and follows the new balance', async () => {
    const release = deferred<Response>();
    const server = gameApi({ 'POST /api/games/dice': () => release.promise });
    const { user } = await open();
    await screen.findByText('$1,234.50');
    await user.click(screen.getByRole('button', { name: 'Roll Dice' }));
    expect(await screen.findByRole('button', { name: 'Rolling...' })).toBeDisabled();
    release.resolve(
      json({
        result: 42.17,
        isWin: true,
        winAmount: 1.98,
        newBalance: 1235.48,
        multiplier: 1.98,
        betId: 'b1',
        fairness,
      }),
    );
    const results = screen.getByRole('region', { name: 'Results' });
    expect(await within(results).findByText('WIN!')).toBeInTheDocument();
    expect(within(results).getByText('42.17')).toBeInTheDocument();
    expect(within(results).getByText('$1.98')).toBeInTheDocument();
    expect(screen.getByTestId('balance')).toHaveTextContent('$1,235.48');
    expect(server.calls('POST /api/games/dice')[0]?.body).toEqual({ betAmount: 1, rollTarget: 50 });
  });

  it('shows LOSE! and the generic message on failure', async () => {
    const server = gameApi({
      'POST /api/games/dice': () =>
        json({ result: 88, isWin: false, winAmount: 0, newBalance: 1233.5, multiplier: 1.98, betId: 'b2', fairness }),
    });
    const { user } = await open();
    await user.click(screen.getByRole('button', { name: 'Roll Dice' }));
    const results = screen.getByRole('region', { name: 'Results' });
    expect(await within(results).findByText('LOSE!')).toBeInTheDocument();
    expect(within(results).getByText('88.00')).toBeInTheDocument();

    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    server.on('POST /api/games/dice', () => json({ message: 'boom' }, 500));
    await user.click(screen.getByRole('button', { name: 'Roll Dice' }));
    expect(await notifications().findByText('Something went wrong. Please try again.')).toBeInTheDocument();
  });
});

describe('Dice autobet', () => {
  const loss = (n: number) =>
    json({
      result: 88,
      isWin: false,
      winAmount: 0,
      newBalance: 1234.5 - n,
      multiplier: 1.98,
      betId: `a${String(n)}`,
      fairness,
    });

  it(
    'places the set number of bets, one at a time, doubling on loss, and shows the count',
    { timeout: 20000 },
    async () => {
      let n = 0;
      const server = gameApi({ 'POST /api/games/dice': () => loss(++n) });
      const { user } = await open();
      await screen.findByText('$1,234.50');
      await user.click(screen.getByRole('tab', { name: 'Auto' }));
      const bets = screen.getByLabelText('Number of Bets');
      await user.clear(bets);
      await user.type(bets, '3');
      const onLoss = screen.getByRole('group', { name: 'On Loss' });
      await user.click(within(onLoss).getByRole('button', { name: 'Increase' }));
      await user.type(screen.getByLabelText('Increase on Loss by %'), '100');
      await user.click(screen.getByRole('button', { name: 'Start Autobet' }));
      expect(await screen.findByText('Autobet finished: 3 bets placed.', {}, { timeout: 5000 })).toBeInTheDocument();
      expect(screen.getByTestId('autobet-count')).toHaveTextContent('3 / 3 bets');
      expect(server.calls('POST /api/games/dice').map((c) => c.body)).toEqual([
        { betAmount: 1, rollTarget: 50 },
        { betAmount: 2, rollTarget: 50 },
        { betAmount: 4, rollTarget: 50 },
      ]);
      expect(JSON.parse(window.localStorage.getItem('fairplay.autobet.dice') ?? '{}')).toMatchObject({
        bets: 3,
        onLoss: { mode: 'increase', percent: 100 },
      });
    },
  );

  it(
    'Stop sends nothing more, locks the bet while running, and the page has no axe violations',
    { timeout: 20000 },
    async () => {
      const release = deferred<Response>();
      const server = gameApi({ 'POST /api/games/dice': () => release.promise });
      const { user, container } = await open();
      await user.click(screen.getByRole('tab', { name: 'Auto' }));
      const bets = screen.getByLabelText('Number of Bets');
      await user.clear(bets);
      await user.type(bets, '0');
      const results = await axe.run(container, { rules: { 'color-contrast': { enabled: false } } });
      expect(results.violations.map((v) => v.id)).toEqual([]);
      await user.click(screen.getByRole('button', { name: 'Start Autobet' }));
      const stop = await screen.findByRole('button', { name: 'Stop Autobet' });
      expect(screen.getByLabelText('Bet Amount')).toBeDisabled();
      expect(screen.getByRole('tab', { name: 'Manual' })).toBeDisabled();
      await user.click(stop);
      release.resolve(loss(1));
      expect(await screen.findByText('Autobet stopped.')).toBeInTheDocument();
      expect(screen.getByTestId('autobet-count')).toHaveTextContent('1 / ∞ bets');
      expect(server.calls('POST /api/games/dice')).toHaveLength(1);
      expect(screen.getByLabelText('Bet Amount')).toBeEnabled();
    },
  );

  it("stops on the server's refusal and shows it", { timeout: 20000 }, async () => {
    gameApi({ 'POST /api/games/dice': () => json({ message: 'Bet amount exceeds the maximum' }, 400) });
    const { user } = await open();
    await user.click(screen.getByRole('tab', { name: 'Auto' }));
    await user.click(screen.getByRole('button', { name: 'Start Autobet' }));
    expect(await screen.findByText('Autobet stopped: Bet amount exceeds the maximum')).toBeInTheDocument();
  });
});

describe('Dice hotkeys', () => {
  it(
    'are off until switched on in the ? panel; then Space rolls once per request, Q halves, W doubles',
    { timeout: 20000 },
    async () => {
      const release = deferred<Response>();
      const server = gameApi({ 'POST /api/games/dice': () => release.promise });
      const { user } = await open();
      await user.keyboard(' ');
      expect(server.calls('POST /api/games/dice')).toHaveLength(0);
      await user.click(screen.getByRole('button', { name: /Hotkeys off/ }));
      const dialog = await screen.findByRole('dialog', { name: 'Hotkeys' });
      expect(within(dialog).getByText('Roll (Manual tab)')).toBeInTheDocument();
      await user.click(within(dialog).getByRole('switch', { name: 'Enable hotkeys' }));
      await user.keyboard('{Escape}');
      expect(screen.getByRole('button', { name: /Hotkeys on/ })).toBeInTheDocument();
      (document.activeElement as HTMLElement | null)?.blur();
      await user.keyboard('w');
      expect(screen.getByLabelText('Bet Amount')).toHaveValue(2);
      await user.keyboard('q');
      await user.keyboard('q');
      expect(screen.getByLabelText('Bet Amount')).toHaveValue(0.5);
      await user.keyboard(' ');
      await user.keyboard(' ');
      expect(await screen.findByRole('button', { name: 'Rolling...' })).toBeDisabled();
      release.resolve(
        json({ result: 88, isWin: false, winAmount: 0, newBalance: 1234, multiplier: 1.98, betId: 'k1', fairness }),
      );
      expect(await within(screen.getByRole('region', { name: 'Results' })).findByText('LOSE!')).toBeInTheDocument();
      expect(server.calls('POST /api/games/dice').map((c) => c.body)).toEqual([{ betAmount: 0.5, rollTarget: 50 }]);
    },
  );
});
