import { act, screen, waitFor, within } from '@testing-library/react';
import { REFRESH_INTERVAL_MS } from '@/lib/auth';
import { getAccessToken, getRefreshToken } from '@/lib/tokens';
import { devConfig, json, mockApi, setCsrfCookie } from '@/testing/mock-api';
import { admin, player, renderApp, signIn } from '@/testing/test-utils';

function api(user: typeof player | null, extra: Parameters<typeof mockApi>[0] = {}) {
  setCsrfCookie();
  if (user) signIn();
  return mockApi({
    'GET /api/auth/config': devConfig,
    'GET /api/auth/user': () =>
      user ? json({ user }) : json({ message: 'No authentication token, access denied' }, 401),
    'POST /api/auth/logout': () => json({ message: 'Logged out' }),
    'GET /api/auth/stats/users': () =>
      json({
        totalUsers: 10,
        usersLastMonth: 4,
        usersLastMonthPercentChange: 33.33,
        usersLastWeek: 1,
        usersLastWeekPercentChange: -50,
      }),
    'GET /api/auth/users': () => json({ users: [], totalPages: 0 }),
    ...extra,
  });
}

describe('layout', () => {
  it('shows the home grid of the six games, the navigation and the footer', async () => {
    api(null);
    renderApp('/');
    const heading = await screen.findByRole('heading', { level: 1, name: 'Fairplay Originals' });
    expect(heading).toBeInTheDocument();
    const grid = screen.getByRole('list', { name: 'Fairplay Originals' });
    const links = within(grid).getAllByRole('link');
    expect(links.map((a) => a.getAttribute('href'))).toEqual([
      '/games/dice',
      '/games/mines',
      '/games/plinko',
      '/games/pump',
      '/games/keno',
      '/games/blackjack',
    ]);
    expect(
      within(screen.getByRole('navigation', { name: 'Main' })).getByRole('link', { name: 'Casino' }),
    ).toHaveAttribute('href', '/');
    const footer = screen.getByRole('contentinfo');
    expect(footer).toHaveTextContent(String(new Date().getFullYear()));
    expect(footer).toHaveTextContent('demo project for educational purposes only');
    expect(await screen.findByRole('button', { name: 'Sign In' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Register' })).toBeInTheDocument();
  });

  it('opens a game in the common frame with its title and description', async () => {
    api(null);
    const { user } = renderApp('/');
    await user.click(await screen.findByRole('link', { name: /Plinko/ }));
    expect(await screen.findByRole('heading', { level: 1, name: 'Plinko' })).toBeInTheDocument();
    expect(screen.getByText('Drop balls and watch them bounce for rewards.')).toBeInTheDocument();
  });

  it('shows balance, username, Settings and Log Out to a player, and Admin only to administrators', async () => {
    api(player);
    const first = renderApp('/');
    expect(await screen.findByText('$1,234.50')).toBeInTheDocument();
    expect(screen.getByText('alice', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Settings' })).toHaveAttribute('href', '/settings');
    expect(screen.getByRole('button', { name: 'Log Out' })).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'Admin' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Sign In' })).not.toBeInTheDocument();
    first.unmount();

    api({ ...admin, balance: 1234567.891 });
    renderApp('/');
    expect(await screen.findByRole('link', { name: 'Admin' })).toHaveAttribute('href', '/admin');
    expect(screen.getByText('$1,234,567.89')).toBeInTheDocument();
  });

  it('folds My Bets, Settings, Admin and Log Out into the account menu', { timeout: 15000 }, async () => {
    const server = api(admin);
    const { user } = renderApp('/');
    const trigger = await screen.findByRole('button', { name: 'root, account menu' });
    await user.click(trigger);
    const menu = within(await screen.findByRole('menu', { name: 'root, account menu' }));
    expect(menu.getAllByRole('menuitem').map((item) => item.textContent)).toEqual([
      'My Bets',
      'Settings',
      'Admin',
      'Log Out',
    ]);
    expect(menu.getByRole('menuitem', { name: 'My Bets' })).toHaveAttribute('href', '/bets');
    await user.keyboard('{Escape}');
    await waitFor(() => {
      expect(trigger).toHaveFocus();
    });
    await user.click(trigger);
    await user.click(
      within(await screen.findByRole('menu', { name: 'root, account menu' })).getByRole('menuitem', {
        name: 'Log Out',
      }),
    );
    expect(await screen.findByRole('button', { name: 'Sign In' })).toBeInTheDocument();
    expect(server.calls('POST /api/auth/logout')).toHaveLength(1);
  });

  it('logs out: ends the session on the server and forgets the tokens', async () => {
    const server = api(player);
    const { user } = renderApp('/');
    await user.click(await screen.findByRole('button', { name: 'Log Out' }));
    expect(await screen.findByRole('button', { name: 'Sign In' })).toBeInTheDocument();
    expect(server.calls('POST /api/auth/logout')[0]?.body).toEqual({ refreshToken: 'refresh-token' });
    expect(getAccessToken()).toBeNull();
    expect(getRefreshToken()).toBeNull();
  });

  it('logs out when another tab of the browser logs out (each tab has its own session)', async () => {
    const server = api(player);
    renderApp('/');
    expect(await screen.findByText('alice', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
    const otherTab = new BroadcastChannel('fairplay.logout');
    otherTab.postMessage('logout');
    otherTab.close();
    expect(await screen.findByRole('button', { name: 'Sign In' })).toBeInTheDocument();
    expect(server.calls('POST /api/auth/logout')[0]?.body).toEqual({ refreshToken: 'refresh-token' });
    expect(getRefreshToken()).toBeNull();
  });
});

describe('route access', () => {
  it('sends guests from /admin to /', async () => {
    api(null);
    const { router } = renderApp('/admin');
    expect(await screen.findByRole('heading', { name: 'Fairplay Originals' })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/');
  });

  it('sends regular users from /admin to /', async () => {
    api(player);
    const { router } = renderApp('/admin');
    expect(await screen.findByRole('heading', { name: 'Fairplay Originals' })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/');
  });

  it('shows the dashboard to administrators', async () => {
    api(admin);
    renderApp('/admin');
    expect(await screen.findByRole('heading', { name: 'Admin Dashboard' })).toBeInTheDocument();
  });

  it('asks guests on /settings to log in, with a button home', async () => {
    api(null);
    const { user, router } = renderApp('/settings');
    expect(await screen.findByText('Please log in to access your settings.')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Go to Home' }));
    expect(router.state.location.pathname).toBe('/');
  });
});

describe('session', () => {
  it('signs out when the user cannot be loaded even after a refresh', async () => {
    const server = api(null, { 'POST /api/auth/refresh': () => json({ message: 'Invalid refresh token' }, 401) });
    signIn();
    renderApp('/');
    expect(await screen.findByRole('button', { name: 'Sign In' })).toBeInTheDocument();
    expect(server.calls('POST /api/auth/refresh')).toHaveLength(1);
    expect(getRefreshToken()).toBeNull();
  });

  it('refreshes the access token every 10 minutes while signed in', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const server = api(player, {
        'POST /api/auth/refresh': () =>
          json({ token: 'fresh', refreshToken: 'refresh-2', user: { ...player, balance: 99 } }),
      });
      renderApp('/');
      expect(await screen.findByText('alice', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
      act(() => {
        vi.advanceTimersByTime(REFRESH_INTERVAL_MS - 1000);
      });
      expect(server.calls('POST /api/auth/refresh')).toHaveLength(0);
      act(() => {
        vi.advanceTimersByTime(1000);
      });
      await waitFor(() => {
        expect(server.calls('POST /api/auth/refresh')).toHaveLength(1);
      });
      expect(await screen.findByText('$99.00')).toBeInTheDocument();
      expect(getAccessToken()).toBe('fresh');
      expect(getRefreshToken()).toBe('refresh-2');
      expect(REFRESH_INTERVAL_MS).toBe(600_000);
    } finally {
      vi.useRealTimers();
    }
  });
});
