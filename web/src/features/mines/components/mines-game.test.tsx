import { fireEvent, screen, within } from '@testing-library/react';
import { fairness, gameApi } from '@/testing/game-api';
import { json } from '@/testing/mock-api';
import { renderApp } from '@/testing/test-utils';

const notifications = () => within(screen.getByRole('region', { name: 'Notifications' }));
const tile = (row: number, col: number, state = 'hidden') =>
  within(screen.getByRole('group', { name: 'Mines board' })).getByRole('button', {
    name: `Row ${String(row)}, column ${String(col)}, ${state}`,
  });

const started = {
  success: true,
  gameId: 'g1',
  newBalance: 1233.5,
  mineCount: 3,
  multiplier: 1,
  nextMultiplier: 1.12,
  fairness,
};
const reveal = (over: Record<string, unknown>) => ({
  success: true,
  hitMine: false,
  minePositions: [],
  isSafe: true,
  multiplier: 1.12,
  potentialWin: 1.12,
  newBalance: 1233.5,
  gameOver: false,
  winAmount: 0,
  revealed: ['0,0'],
  nextMultiplier: 1.29,
  ...over,
});

async function open() {
  const app = renderApp('/games/mines');
  await screen.findByRole('heading', { level: 1, name: 'Mines' });
  await screen.findByLabelText('Bet Amount');
  return app;
}

describe('Mines', () => {
  it('has a 5×5 board, the mine slider and Play', async () => {
    gameApi();
    await open();
    expect(within(screen.getByRole('group', { name: 'Mines board' })).getAllByRole('button')).toHaveLength(25);
    const mines = screen.getByRole('slider', { name: 'Mines' });
    expect(mines).toHaveValue('3');
    expect(mines).toHaveAttribute('min', '1');
    expect(mines).toHaveAttribute('max', '24');
    // Tiles are clickable only during a game.
    expect(tile(1, 1)).toBeDisabled();
    fireEvent.change(mines, { target: { value: '24' } });
    expect(screen.getByText('24')).toBeInTheDocument();
  });

  it('reveals gems, cashes out and shows the win', async () => {
    const server = gameApi({
      'POST /api/games/mines/start': () => json(started),
      'POST /api/games/mines/click': () => json(reveal({})),
      'POST /api/games/mines/cashout': () =>
        json({
          success: true,
          minePositions: ['3,3', '3,0', '1,0'],
          winAmount: 1.12,
          multiplier: 1.12,
          newBalance: 1234.62,
          revealed: ['0,0'],
        }),
    });
    const { user } = await open();
    await user.click(screen.getByRole('button', { name: 'Play' }));
    const cashOut = await screen.findByRole('button', { name: 'Cash Out $0.00' });
    expect(cashOut).toBeDisabled();
    expect(screen.getByTestId('balance')).toHaveTextContent('$1,233.50');
    expect(server.calls('POST /api/games/mines/start')[0]?.body).toEqual({ betAmount: 1, mineCount: 3 });
    expect(screen.getByLabelText('Bet Amount')).toBeDisabled();

    await user.click(tile(1, 1));
    expect(await screen.findByRole('button', { name: 'Cash Out $1.12' })).toBeEnabled();
    expect(tile(1, 1, 'gem')).toHaveAttribute('aria-disabled', 'true');
    expect(server.calls('POST /api/games/mines/click')[0]?.body).toEqual({ gameId: 'g1', row: 0, col: 0 });
    expect(screen.getByText('1.12x')).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Cash Out $1.12' }));
    expect(await screen.findByText('You Won!')).toBeInTheDocument();
    expect(screen.getAllByText('$1.12').length).toBeGreaterThan(0);
    expect(tile(4, 4, 'mine')).toBeDisabled();
    expect(tile(2, 2, 'gem')).toBeDisabled();
    expect(screen.getByTestId('balance')).toHaveTextContent('$1,234.62');
    expect(screen.getByRole('button', { name: 'Play' })).toBeEnabled();
  });

  it('moves between tiles with the arrow keys and reveals with Enter or Space', async () => {
    const server = gameApi({
      'POST /api/games/mines/start': () => json(started),
      'POST /api/games/mines/click': () => json(reveal({ revealed: ['1,1'] })),
    });
    const { user } = await open();
    await user.click(screen.getByRole('button', { name: 'Play' }));
    await screen.findByRole('button', { name: 'Cash Out $0.00' });
    // One tile takes part in the Tab order.
    const board = within(screen.getByRole('group', { name: 'Mines board' }));
    expect(board.getAllByRole('button').filter((b) => b.tabIndex === 0)).toHaveLength(1);
    tile(1, 1).focus();
    await user.keyboard('{ArrowRight}');
    expect(tile(1, 2)).toHaveFocus();
    await user.keyboard('{ArrowDown}');
    expect(tile(2, 2)).toHaveFocus();
    expect(tile(2, 2)).toHaveAttribute('tabindex', '0');
    expect(tile(1, 1)).toHaveAttribute('tabindex', '-1');
    await user.keyboard('{ArrowUp}{ArrowUp}{ArrowLeft}{ArrowLeft}');
    expect(tile(1, 1)).toHaveFocus();
    await user.keyboard('{End}');
    expect(tile(1, 5)).toHaveFocus();
    await user.keyboard('{Home}{ArrowDown}{ArrowRight}');
    expect(tile(2, 2)).toHaveFocus();
    await user.keyboard('{Enter}');
    expect(await screen.findByRole('button', { name: 'Row 2, column 2, gem' })).toBeInTheDocument();
    expect(server.calls('POST /api/games/mines/click')[0]?.body).toEqual({ gameId: 'g1', row: 1, col: 1 });
  });

  it('ends the game on a mine with Game Over', async () => {
    gameApi({
      'POST /api/games/mines/start': () => json(started),
      'POST /api/games/mines/click': () =>
        json(
          reveal({
            hitMine: true,
            isSafe: false,
            minePositions: ['0,0', '3,0', '1,0'],
            multiplier: 0,
            potentialWin: 0,
            gameOver: true,
            revealed: [],
          }),
        ),
    });
    const { user } = await open();
    await user.click(screen.getByRole('button', { name: 'Play' }));
    await screen.findByRole('button', { name: /^Cash Out/ });
    await user.click(tile(1, 1));
    expect(await screen.findByText('Game Over')).toBeInTheDocument();
    expect(tile(1, 1, 'mine')).toBeInTheDocument();
    expect(tile(4, 1, 'mine')).toBeInTheDocument();
  });

  it('resumes a running game after a reload', async () => {
    gameApi({
      'GET /api/games/active': () =>
        json({
          mines: {
            gameId: 'g9',
            betAmount: 2,
            mineCount: 5,
            revealed: ['2,2', '0,4'],
            multiplier: 1.64,
            potentialWin: 3.28,
            nextMultiplier: 2.09,
            fairness,
          },
          pump: null,
          blackjack: null,
        }),
    });
    await open();
    expect(await screen.findByRole('button', { name: 'Cash Out $3.28' })).toBeEnabled();
    expect(tile(3, 3, 'gem')).toBeInTheDocument();
    expect(tile(1, 5, 'gem')).toBeInTheDocument();
    expect(tile(1, 1)).toBeEnabled();
    expect(screen.getByLabelText('Bet Amount')).toHaveValue(2);
    expect(screen.getByRole('slider', { name: 'Mines' })).toHaveValue('5');
  });

  it('shows the generic message when a call fails', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    gameApi({ 'POST /api/games/mines/start': () => json({ message: 'Something broke' }, 500) });
    const { user } = await open();
    await user.click(screen.getByRole('button', { name: 'Play' }));
    expect(await notifications().findByText('Something went wrong. Please try again.')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Play' })).toBeEnabled();
  });

  it("shows the server's message when it refuses the bet (a halved stake under the minimum)", async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    gameApi({ 'POST /api/games/mines/start': () => json({ message: 'The minimum bet is 0.1' }, 400) });
    const { user } = await open();
    await user.click(screen.getByRole('button', { name: 'Play' }));
    expect(await notifications().findByText('The minimum bet is 0.1')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Play' })).toBeEnabled();
  });
});

describe('Mines random tile, autobet and hotkeys', () => {
  it('Random Tile reveals one hidden tile of the round', { timeout: 20000 }, async () => {
    const server = gameApi({
      'POST /api/games/mines/start': () => json(started),
      'POST /api/games/mines/click': (req) => {
        const { row, col } = req.body as { row: number; col: number };
        return json(reveal({ revealed: [`${String(row)},${String(col)}`] }));
      },
    });
    const { user } = await open();
    await user.click(screen.getByRole('button', { name: 'Play' }));
    await user.click(await screen.findByRole('button', { name: 'Random Tile' }));
    expect(await screen.findByRole('button', { name: 'Cash Out $1.12' })).toBeEnabled();
    const calls = server.calls('POST /api/games/mines/click');
    expect(calls).toHaveLength(1);
    const { row, col } = calls[0]?.body as { row: number; col: number };
    expect(row).toBeGreaterThanOrEqual(0);
    expect(row).toBeLessThan(5);
    expect(col).toBeGreaterThanOrEqual(0);
    expect(col).toBeLessThan(5);
    expect(tile(row + 1, col + 1, 'gem')).toBeInTheDocument();
  });

  it(
    'plays rounds with the selected tiles: cashes out when all survive, stops revealing at a mine',
    { timeout: 20000 },
    async () => {
      let round = 0;
      const server = gameApi({
        'POST /api/games/mines/start': () => json({ ...started, gameId: `g${String(++round)}` }),
        'POST /api/games/mines/click': (req) => {
          const { row, col } = req.body as { row: number; col: number };
          // Round 2's first tile is a mine.
          if (round === 2)
            return json(reveal({ hitMine: true, isSafe: false, gameOver: true, minePositions: ['0,0', '4,4', '2,2'] }));
          return json(reveal({ revealed: [`${String(row)},${String(col)}`] }));
        },
        'POST /api/games/mines/cashout': () =>
          json({
            success: true,
            minePositions: ['3,3'],
            winAmount: 1.29,
            multiplier: 1.29,
            newBalance: 1234.79,
            revealed: [],
          }),
      });
      const { user } = await open();
      await user.click(screen.getByRole('tab', { name: 'Auto' }));
      expect(screen.getByRole('button', { name: 'Start Autobet' })).toBeDisabled();
      await user.click(tile(1, 1));
      await user.click(tile(2, 3));
      expect(tile(1, 1)).toHaveAttribute('aria-pressed', 'true');
      expect(screen.getByText(/2 tiles selected/)).toBeInTheDocument();
      const bets = screen.getByLabelText('Number of Bets');
      await user.clear(bets);
      await user.type(bets, '2');
      await user.click(screen.getByRole('button', { name: 'Start Autobet' }));
      expect(
        await screen.findByText('Autobet finished: 2 bets placed.', undefined, { timeout: 5000 }),
      ).toBeInTheDocument();
      expect(server.calls('POST /api/games/mines/start')).toHaveLength(2);
      expect(server.calls('POST /api/games/mines/click').map((c) => c.body)).toEqual([
        { gameId: 'g1', row: 0, col: 0 },
        { gameId: 'g1', row: 1, col: 2 },
        { gameId: 'g2', row: 0, col: 0 },
      ]);
      expect(server.calls('POST /api/games/mines/cashout').map((c) => c.body)).toEqual([{ gameId: 'g1' }]);
      expect(screen.getByTestId('autobet-count')).toHaveTextContent('2 / 2 bets');
    },
  );

  it('C cashes out and R reveals a random tile when the hotkeys are on', { timeout: 20000 }, async () => {
    window.localStorage.setItem('fairplay.hotkeys', 'on');
    const server = gameApi({
      'POST /api/games/mines/start': () => json(started),
      'POST /api/games/mines/click': () => json(reveal({})),
      'POST /api/games/mines/cashout': () =>
        json({
          success: true,
          minePositions: [],
          winAmount: 1.12,
          multiplier: 1.12,
          newBalance: 1234.62,
          revealed: ['0,0'],
        }),
    });
    const { user } = await open();
    await user.keyboard('c');
    await user.click(screen.getByRole('button', { name: 'Play' }));
    await screen.findByRole('button', { name: 'Random Tile' });
    (document.activeElement as HTMLElement | null)?.blur();
    await user.keyboard('r');
    expect(await screen.findByRole('button', { name: 'Cash Out $1.12' })).toBeEnabled();
    await user.keyboard('c');
    expect(await screen.findByText('You Won!')).toBeInTheDocument();
    expect(server.calls('POST /api/games/mines/click')).toHaveLength(1);
    expect(server.calls('POST /api/games/mines/cashout')).toHaveLength(1);
  });
});
