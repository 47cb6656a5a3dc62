import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { fairness, gameApi } from '@/testing/game-api';
import { deferred, json } from '@/testing/mock-api';
import { renderApp } from '@/testing/test-utils';

const stat = (label: string) => screen.getByText(label, { exact: true }).parentElement!;

async function open() {
  const app = renderApp('/games/plinko');
  await screen.findByRole('heading', { level: 1, name: 'Plinko' });
  await screen.findByLabelText('Bet Amount');
  return app;
}

describe('Plinko', () => {
  it('has its controls, defaults and payout buckets', async () => {
    gameApi();
    const { user } = await open();
    expect(screen.getByText('Drop balls and watch them bounce for rewards.')).toBeInTheDocument();
    const rows = screen.getByRole('slider', { name: 'Rows' });
    expect(rows).toHaveValue('8');
    expect(rows).toHaveAttribute('min', '8');
    expect(rows).toHaveAttribute('max', '16');
    const risk = within(screen.getByRole('group', { name: 'Risk Level' }));
    expect(risk.getAllByRole('button').map((b) => b.textContent)).toEqual(['Low', 'Medium', 'High']);
    expect(risk.getByRole('button', { name: 'Medium' })).toHaveAttribute('aria-pressed', 'true');
    const buckets = within(screen.getByRole('list', { name: 'Payouts' }));
    expect(buckets.getAllByRole('listitem').map((b) => b.textContent)).toEqual([
      '13',
      '3',
      '1.3',
      '0.7',
      '0.4',
      '0.7',
      '1.3',
      '3',
      '13',
    ]);
    await user.click(risk.getByRole('button', { name: 'High' }));
    fireEvent.change(rows, { target: { value: '16' } });
    expect(rows).toHaveValue('16');
    const high16 = within(screen.getByRole('list', { name: 'Payouts' })).getAllByRole('listitem');
    expect(high16).toHaveLength(17);
    expect(high16[0]).toHaveTextContent('1k');
    expect(screen.getByRole('button', { name: 'Reset' })).toBeDisabled();
    expect(screen.getByRole('button', { name: 'Drop Ball' })).toBeEnabled();
  });

  it(
    'drops a ball: the stake leaves at once, the balance and the win show when it lands',
    { timeout: 20000 },
    async () => {
      const release = deferred<Response>();
      const server = gameApi({ 'POST /api/games/plinko': () => release.promise });
      const { user } = await open();
      await screen.findByText('$1,234.50');
      await user.click(screen.getByRole('button', { name: 'Drop Ball' }));
      expect(await screen.findByRole('button', { name: 'Dropping...' })).toBeDisabled();
      release.resolve(
        json({
          decisions: [1, 1, 0, 1, 1, 1, 1, 1],
          finalBucket: 7,
          multiplier: 3,
          winAmount: 3,
          newBalance: 1236.5,
          betId: 'p1',
          fairness,
        }),
      );
      expect(await within(stat('Balls Dropped')).findByText('1')).toBeInTheDocument();
      // In flight: only the stake has left the balance; nothing tells the win.
      expect(screen.getByTestId('balance')).toHaveTextContent('$1,233.50');
      expect(within(stat('Last Win')).getByText('$0.00')).toBeInTheDocument();
      expect(within(stat('Total Winnings')).getByText('$0.00')).toBeInTheDocument();
      expect(screen.getByRole('slider', { name: 'Rows' })).toBeDisabled();
      expect(server.calls('POST /api/games/plinko')[0]?.body).toEqual({ betAmount: 1, rows: 8, risk: 'medium' });

      // 10 path points at 150 ms each: the ball lands in bucket 7.
      expect(
        await within(stat('Total Winnings')).findByText('$3.00', undefined, { timeout: 10000 }),
      ).toBeInTheDocument();
      expect(within(stat('Last Win')).getByText('$3.00')).toBeInTheDocument();
      expect(screen.getByTestId('balance')).toHaveTextContent('$1,236.50');
      const landed = within(screen.getByRole('list', { name: 'Payouts' })).getAllByRole('listitem')[7];
      expect(landed).toHaveAttribute('aria-current', 'true');
      expect(screen.getByRole('slider', { name: 'Rows' })).toBeEnabled();

      await user.click(screen.getByRole('button', { name: 'Reset' }));
      expect(within(stat('Balls Dropped')).getByText('0')).toBeInTheDocument();
      expect(within(stat('Total Winnings')).getByText('$0.00')).toBeInTheDocument();
      expect(screen.getByRole('button', { name: 'Reset' })).toBeDisabled();
    },
  );

  it('only logs a failure', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const server = gameApi({ 'POST /api/games/plinko': () => json({ message: 'Something went wrong' }, 500) });
    const { user } = await open();
    await screen.findByText('$1,234.50');
    await user.click(screen.getByRole('button', { name: 'Drop Ball' }));
    await waitFor(() => {
      expect(error).toHaveBeenCalledWith('plinko: drop failed', expect.anything());
    });
    expect(server.calls('POST /api/games/plinko')).toHaveLength(1);
    expect(within(screen.getByRole('region', { name: 'Notifications' })).queryAllByRole('listitem')).toHaveLength(0);
    expect(within(stat('Balls Dropped')).getByText('0')).toBeInTheDocument();
  });

  it('asks a guest to log in, as every game does, and sends nothing', async () => {
    const server = gameApi({}, { user: null });
    const { user } = await open();
    await screen.findByRole('button', { name: 'Sign In' });
    await user.click(screen.getByRole('button', { name: 'Drop Ball' }));
    expect(
      await within(screen.getByRole('region', { name: 'Notifications' })).findByText('Please login to play'),
    ).toBeInTheDocument();
    expect(server.calls('POST /api/games/plinko')).toHaveLength(0);
  });
});

describe('Plinko autobet', () => {
  it('drops one ball at a time and stops after a single win above the limit', { timeout: 40000 }, async () => {
    const results = [
      { decisions: [0, 0, 0, 1, 1, 1, 1, 0], finalBucket: 4, multiplier: 0.4, winAmount: 0.4 },
      { decisions: [1, 1, 1, 1, 1, 1, 1, 1], finalBucket: 8, multiplier: 13, winAmount: 13 },
      { decisions: [0, 0, 0, 1, 1, 1, 1, 0], finalBucket: 4, multiplier: 0.4, winAmount: 0.4 },
    ];
    let n = 0;
    const server = gameApi({
      'POST /api/games/plinko': () => {
        const r = results[n++] ?? results[0];
        return json({ ...r, newBalance: 1234.5, betId: `p${String(n)}`, fairness });
      },
    });
    const { user } = await open();
    await screen.findByText('$1,234.50');
    await user.click(screen.getByRole('tab', { name: 'Auto' }));
    const bets = screen.getByLabelText('Number of Bets');
    await user.clear(bets);
    await user.type(bets, '0');
    await user.type(screen.getByLabelText('Stop on Single Win Above'), '5');
    await user.click(screen.getByRole('button', { name: 'Start Autobet' }));
    expect(await screen.findByRole('button', { name: 'Stop Autobet' })).toBeInTheDocument();
    expect(
      within(screen.getByRole('region', { name: 'Results' })).getByRole('button', { name: 'Reset' }),
    ).toBeDisabled();
    expect(
      await screen.findByText('Autobet stopped: a single win of $13.00 is above the limit.', undefined, {
        timeout: 30000,
      }),
    ).toBeInTheDocument();
    expect(screen.getByTestId('autobet-count')).toHaveTextContent('2 / ∞ bets');
    expect(server.calls('POST /api/games/plinko')).toHaveLength(2);
    await waitFor(() => {
      expect(within(stat('Total Winnings')).getByText('$13.40')).toBeInTheDocument();
    });
  });
});
