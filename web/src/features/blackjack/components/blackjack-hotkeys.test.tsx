import { screen, within } from '@testing-library/react';
import { gameApi } from '@/testing/game-api';
import { renderApp } from '@/testing/test-utils';

describe('Blackjack hotkeys panel', () => {
  it('lists Space, Q, W, H/S/D/P and I/N; no key does anything while they are off', { timeout: 20000 }, async () => {
    const server = gameApi();
    const { user } = renderApp('/games/blackjack');
    await screen.findByLabelText('Bet Amount');
    await user.keyboard(' hsdp');
    expect(server.calls('POST /api/games/blackjack/start')).toHaveLength(0);
    await user.click(screen.getByRole('button', { name: /Hotkeys off/ }));
    const dialog = await screen.findByRole('dialog', { name: 'Hotkeys' });
    const rows = within(dialog)
      .getAllByRole('row')
      .slice(1)
      .map((r) => r.textContent);
    expect(rows).toEqual([
      'SpaceDeal',
      'QHalve the bet',
      'WDouble the bet',
      'HHit',
      'SStand',
      'DDouble down',
      'PSplit',
      'ITake insurance (or even money)',
      'NDecline insurance',
    ]);
    expect(within(dialog).getByRole('switch', { name: 'Enable hotkeys' })).toHaveAttribute('aria-checked', 'false');
  });
});
