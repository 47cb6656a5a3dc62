import { screen, within } from '@testing-library/react';
import { gameApi } from '@/testing/game-api';
import { json } from '@/testing/mock-api';
import { player, renderApp } from '@/testing/test-utils';

const drained = { ...player, balance: 0.05 };

async function offer() {
  return within(await screen.findByRole('region', { name: 'Daily top-up' }));
}

describe('Daily top-up', () => {
  it('offers the top-up below the smallest bet and shows the new balance once claimed', async () => {
    const nextAt = new Date(Date.now() + 24 * 3600_000).toISOString();
    const server = gameApi(
      {
        'GET /api/wallet/top-up': () => json({ available: true, amount: 100, threshold: 0.1 }),
        'POST /api/wallet/top-up': () => json({ newBalance: 100.05, amount: 100, nextAt }),
      },
      { user: drained },
    );
    const { user } = renderApp('/games/dice');
    const panel = await offer();
    expect(panel.getByText(/Claim your daily top-up of \$100\.00/)).toBeInTheDocument();
    expect(screen.getByTestId('balance')).toHaveTextContent('$0.05');
    await user.click(panel.getByRole('button', { name: 'Claim $100.00' }));
    expect(await screen.findByTestId('balance')).toHaveTextContent('$100.05');
    expect(server.calls('POST /api/wallet/top-up')).toHaveLength(1);
    expect(server.calls('POST /api/wallet/top-up')[0]?.headers['x-csrf-token']).toBeTruthy();
    expect(screen.queryByRole('region', { name: 'Daily top-up' })).not.toBeInTheDocument();
  });

  it('says when the next top-up comes while it is not available', async () => {
    const nextAt = new Date(Date.now() + (5 * 60 + 12) * 60_000 - 30_000).toISOString();
    gameApi(
      { 'GET /api/wallet/top-up': () => json({ available: false, amount: 100, threshold: 0.1, nextAt }) },
      { user: drained },
    );
    renderApp('/games/dice');
    const panel = await offer();
    expect(panel.getByText(/next daily top-up of \$100\.00 is available/)).toBeInTheDocument();
    expect(panel.getByText(/^in 5 h 12 min \(/)).toHaveAttribute('datetime', nextAt);
    expect(panel.queryByRole('button')).not.toBeInTheDocument();
  });

  it('shows the server’s refusal and asks again', async () => {
    const server = gameApi(
      {
        'GET /api/wallet/top-up': () => json({ available: true, amount: 100, threshold: 0.1 }),
        'POST /api/wallet/top-up': () => json({ message: 'The daily top-up was already claimed' }, 409),
      },
      { user: drained },
    );
    const { user } = renderApp('/games/dice');
    const panel = await offer();
    const before = server.calls('GET /api/wallet/top-up').length;
    await user.click(panel.getByRole('button', { name: 'Claim $100.00' }));
    expect(await panel.findByText('The daily top-up was already claimed')).toBeInTheDocument();
    expect(screen.getByTestId('balance')).toHaveTextContent('$0.05');
    expect(server.calls('GET /api/wallet/top-up').length).toBeGreaterThan(before);
  });

  it('asks to finish the running game when that is what stands in the way', async () => {
    gameApi(
      { 'GET /api/wallet/top-up': () => json({ available: false, amount: 100, threshold: 0.1 }) },
      { user: drained },
    );
    renderApp('/games/dice');
    const panel = await offer();
    expect(panel.getByText(/Finish your running game to claim the daily top-up/)).toBeInTheDocument();
    expect(panel.queryByRole('button')).not.toBeInTheDocument();
  });

  it('offers nothing when top-ups are turned off', async () => {
    const server = gameApi(
      { 'GET /api/wallet/top-up': () => json({ available: false, amount: 0, threshold: 0.1 }) },
      { user: drained },
    );
    renderApp('/games/dice');
    await screen.findByRole('button', { name: 'Roll Dice' });
    // The second read comes from the low balance, once the first answer was on screen.
    await vi.waitFor(() => {
      expect(server.calls('GET /api/wallet/top-up').length).toBeGreaterThan(1);
    });
    expect(screen.queryByRole('region', { name: 'Daily top-up' })).not.toBeInTheDocument();
  });

  it('stays out of the way while the balance covers a bet', async () => {
    const server = gameApi({ 'GET /api/wallet/top-up': () => json({ available: false, amount: 100, threshold: 0.1 }) });
    renderApp('/games/dice');
    await screen.findByRole('button', { name: 'Roll Dice' });
    await screen.findByTestId('balance');
    expect(server.calls('GET /api/wallet/top-up').length).toBeGreaterThan(0);
    expect(screen.queryByRole('region', { name: 'Daily top-up' })).not.toBeInTheDocument();
  });
});
