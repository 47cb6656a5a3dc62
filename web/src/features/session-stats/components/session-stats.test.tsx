import { act, screen, within } from '@testing-library/react';
import { announceReveal, resetReveals } from '@/lib/reveals';
import { clearTokens } from '@/lib/tokens';
import { gameApi } from '@/testing/game-api';
import { renderApp } from '@/testing/test-utils';
import { chartPath } from './profit-chart';

const figure = (panel: { getByText: typeof screen.getByText }, label: string) =>
  panel.getByText(label, { selector: 'dt' }).nextElementSibling?.textContent;

afterEach(() => {
  resetReveals();
});

describe('Live stats', () => {
  it('opens from its button and counts the game’s reveals since the page opened', async () => {
    gameApi();
    const { user } = renderApp('/games/dice');
    const toggle = await screen.findByRole('button', { name: 'Live stats' });
    expect(toggle).toHaveAttribute('aria-expanded', 'false');
    expect(screen.queryByRole('region', { name: 'Live stats' })).not.toBeInTheDocument();
    await user.click(toggle);
    expect(toggle).toHaveAttribute('aria-expanded', 'true');
    const panel = within(screen.getByRole('region', { name: 'Live stats' }));
    expect(panel.getByRole('img', { name: 'Profit chart: no bets yet' })).toBeInTheDocument();

    act(() => {
      announceReveal({ game: 'dice', betId: 'a', amount: 1.1, multiplier: 2, payout: 2.2 });
      announceReveal({ game: 'dice', betId: 'b', amount: 0.7, multiplier: 0, payout: 0 });
      announceReveal({ game: 'dice', betId: 'c', amount: 0.2, multiplier: 1, payout: 0.2 });
      announceReveal({ game: 'keno', betId: 'k', amount: 50, multiplier: 0, payout: 0 });
    });
    expect(figure(panel, 'Wagered')).toBe('$2.00');
    expect(figure(panel, 'Profit')).toBe('$0.40');
    expect(figure(panel, 'Wins')).toBe('1');
    expect(figure(panel, 'Losses')).toBe('1');
    expect(panel.getByRole('img', { name: 'Profit over 3 bets, now $0.40' })).toBeInTheDocument();

    await user.click(panel.getByRole('button', { name: 'Reset' }));
    expect(figure(panel, 'Wagered')).toBe('$0.00');
    expect(figure(panel, 'Wins')).toBe('0');
    act(() => {
      announceReveal({ game: 'dice', betId: 'd', amount: 3, multiplier: 0, payout: 0 });
    });
    expect(figure(panel, 'Profit')).toBe('-$3.00');
  });

  it('starts again when the player signs out', async () => {
    gameApi();
    const { user } = renderApp('/games/dice');
    await user.click(await screen.findByRole('button', { name: 'Live stats' }));
    const panel = within(screen.getByRole('region', { name: 'Live stats' }));
    act(() => {
      announceReveal({ game: 'dice', betId: 'a', amount: 5, multiplier: 0, payout: 0 });
    });
    expect(figure(panel, 'Wagered')).toBe('$5.00');
    act(() => {
      clearTokens();
    });
    await vi.waitFor(() => {
      expect(figure(panel, 'Wagered')).toBe('$0.00');
    });
  });
});

describe('chartPath', () => {
  it('spans the box with zero inside it', () => {
    const { line, zeroY } = chartPath([0, 2, -2]);
    expect(line).toBe('4.0,45.0 150.0,4.0 296.0,86.0');
    expect(zeroY).toBe(45);
  });

  it('draws a flat line for no bets', () => {
    expect(chartPath([0, 0])).toEqual({ line: '4.0,45.0 296.0,45.0', zeroY: 45 });
  });
});
