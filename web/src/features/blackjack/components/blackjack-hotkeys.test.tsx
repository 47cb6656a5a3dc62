import { screen, within } from '@testing-library/react';
import { gameApi } from '@/testing/game-api';
import { renderApp } from '@/testing/test-utils';

describe('Blackjack hotkeys panel', () => {
  it(
    'lists Space, Q, W, the always-on H/S/D and the coming P/I; Space deals nothing while off',
    { timeout: 20000 },
    async () => {
      const server = gameApi();
      const { user } = renderApp('/games/blackjack');
      await screen.findByLabelText('Bet Amount');
      await user.keyboard(' ');
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
        'HHit (always on)',
        'SStand (always on)',
        'DDouble down (always on)',
        'PSplit (coming soon)',
        'IInsurance (coming soon)',
      ]);
      expect(within(dialog).getByRole('switch', { name: 'Enable hotkeys' })).toHaveAttribute('aria-checked', 'false');
    },
  );
});
