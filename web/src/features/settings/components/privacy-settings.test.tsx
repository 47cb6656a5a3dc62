import { screen } from '@testing-library/react';
import { gameApi } from '@/testing/game-api';
import { deferred, json } from '@/testing/mock-api';
import { player, renderApp } from '@/testing/test-utils';

describe('Privacy settings', () => {
  it('hides the username in live bets and shows it again', async () => {
    const server = gameApi({
      'POST /api/auth/preferences': (req) =>
        json({ user: { ...player, hideUsername: (req.body as { hideUsername: boolean }).hideUsername } }),
    });
    const { user } = renderApp('/settings');
    const toggle = await screen.findByRole('switch', { name: 'Hide my username in live bets' });
    expect(toggle).toHaveAttribute('aria-checked', 'false');
    await user.click(toggle);
    expect(server.calls('POST /api/auth/preferences')[0]?.body).toEqual({ hideUsername: true });
    await vi.waitFor(() => {
      expect(toggle).toHaveAttribute('aria-checked', 'true');
    });
    expect(toggle).toBeEnabled();
    await user.click(toggle);
    expect(server.calls('POST /api/auth/preferences')[1]?.body).toEqual({ hideUsername: false });
    await vi.waitFor(() => {
      expect(toggle).toHaveAttribute('aria-checked', 'false');
    });
  });

  it('shows the choice while saving and puts it back when saving fails', async () => {
    const response = deferred<Response>();
    gameApi({ 'POST /api/auth/preferences': () => response.promise });
    const { user } = renderApp('/settings');
    const toggle = await screen.findByRole('switch', { name: 'Hide my username in live bets' });
    await user.click(toggle);
    expect(toggle).toHaveAttribute('aria-checked', 'true');
    expect(toggle).toBeDisabled();
    response.resolve(json({ message: 'Something went wrong. Please try again.' }, 500));
    expect(await screen.findByText('Something went wrong. Please try again.')).toBeInTheDocument();
    expect(toggle).toHaveAttribute('aria-checked', 'false');
  });
});
