import { act, screen, waitFor, within } from '@testing-library/react';
import { apiRequest } from '@/lib/api-client';
import { REFRESH_INTERVAL_MS } from '@/lib/auth';
import { getAccessToken, hasSession, LOGOUT_PENDING_KEY } from '@/lib/tokens';
import { devConfig, hasSignedInCookie, json, mockApi, setCsrfCookie, setSignedInCookie } from '@/testing/mock-api';
import { admin, player, renderApp, signIn } from '@/testing/test-utils';

function api(user: typeof player | null, extra: Parameters<typeof mockApi>[0] = {}) {
  setCsrfCookie();
  if (user) signIn(user);
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

/**
 * until polls done with real timers, for tests that fake setInterval (which
 * waitFor polls with) and wait for something that changes no element.
 */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(done()).toBe(true);
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

  it('logs out: ends the session of the cookie on the server and forgets the tokens', async () => {
    const server = api(player);
    const { user } = renderApp('/');
    await user.click(await screen.findByRole('button', { name: 'Log Out' }));
    expect(await screen.findByRole('button', { name: 'Sign In' })).toBeInTheDocument();
    const [logout] = server.calls('POST /api/auth/logout');
    expect(logout?.body).toEqual({});
    expect(logout?.headers['x-fairplay-refresh-cookie']).toBe('1');
    expect(getAccessToken()).toBeNull();
    expect(hasSignedInCookie()).toBe(false);
    expect(hasSession()).toBe(false);
  });

  it('a logout that got no answer signs the tab out and is sent again at the next page load', async () => {
    let answer = () => json({ message: 'Bad gateway' }, 502);
    const server = api(player, { 'POST /api/auth/logout': () => answer() });
    const first = renderApp('/');
    await first.user.click(await screen.findByRole('button', { name: 'Log Out' }));
    expect(await screen.findByRole('button', { name: 'Sign In' })).toBeInTheDocument();
    expect(localStorage.getItem(LOGOUT_PENDING_KEY)).toBe('1');
    first.unmount();
    // The next page load: the server answers now.
    answer = () => json({ message: 'Logged out successfully' });
    renderApp('/');
    expect(await screen.findByRole('button', { name: 'Sign In' })).toBeInTheDocument();
    await waitFor(() => {
      expect(server.calls('POST /api/auth/logout')).toHaveLength(2);
    });
    expect(server.calls('POST /api/auth/logout')[1]?.headers['x-fairplay-refresh-cookie']).toBe('1');
    expect(localStorage.getItem(LOGOUT_PENDING_KEY)).toBeNull();
  });

  it('a logout stays pending until the cookies are gone: the server’s 429 cleared them, a CDN’s did not', async () => {
    let clears = true;
    const server = api(player, {
      'POST /api/auth/logout': () => {
        // The server clears the cookies whatever its answer; a CDN in front does not.
        if (clears) document.cookie = 'fairplay_signed_in=; Max-Age=0; path=/';
        return json({ message: 'Too many requests, please try again later' }, 429);
      },
    });
    const first = renderApp('/');
    await first.user.click(await screen.findByRole('button', { name: 'Log Out' }));
    expect(await screen.findByRole('button', { name: 'Sign In' })).toBeInTheDocument();
    expect(localStorage.getItem(LOGOUT_PENDING_KEY)).toBeNull();
    expect(server.calls('POST /api/auth/logout')).toHaveLength(1);
    first.unmount();

    clears = false;
    signIn(player);
    const second = renderApp('/');
    await second.user.click(await screen.findByRole('button', { name: 'Log Out' }));
    expect(await screen.findByRole('button', { name: 'Sign In' })).toBeInTheDocument();
    expect(localStorage.getItem(LOGOUT_PENDING_KEY)).toBe('1');
  });

  it('a sign-in clears a pending logout, so the next page load does not end the new session', async () => {
    const server = api(player, { 'POST /api/auth/login': () => json({ token: 'a', user: player }) });
    localStorage.setItem(LOGOUT_PENDING_KEY, '1');
    await apiRequest('/auth/login', { method: 'POST', body: {} });
    expect(localStorage.getItem(LOGOUT_PENDING_KEY)).toBeNull();
    renderApp('/');
    expect(await screen.findByText('alice', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
    expect(server.calls('POST /api/auth/logout')).toHaveLength(0);
  });

  it('logging out drops the player even when a hint cookie planted for the parent domain says signed in', async () => {
    api(player);
    const { user } = renderApp('/');
    expect(await screen.findByText('alice', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
    // A copy of the hint this page cannot delete (another path or domain, in a real browser).
    const cookies = document.cookie;
    expect(cookies).toContain('fairplay_signed_in=1');
    const planted = vi.spyOn(document, 'cookie', 'get').mockReturnValue(cookies);
    try {
      await user.click(screen.getByRole('button', { name: 'Log Out' }));
      expect(await screen.findByRole('button', { name: 'Sign In' })).toBeInTheDocument();
      expect(screen.queryByText('alice', { selector: '[title="Signed in as"]' })).not.toBeInTheDocument();
    } finally {
      planted.mockRestore();
    }
  });

  it('a refresh that brings another player’s session drops this tab’s player and shows the new one', async () => {
    const bob = { ...player, _id: '7d1c2a9e-0000-4000-8000-000000000003', username: 'bob' };
    const server = api(player, {
      'POST /api/auth/refresh': () => json({ token: 'bobs', user: bob }),
      'GET /api/auth/user': (req) =>
        req.headers.authorization === 'Bearer bobs' ? json({ user: bob }) : json({ user: player }),
      'GET /api/alices-request': () => json({ message: 'Token expired' }, 401),
    });
    const { queryClient } = renderApp('/');
    expect(await screen.findByText('alice', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
    queryClient.setQueryData(['bets', 'mine'], ['alice-bet']);
    // A request of alice's meets a 401; the refresh brings bob's session
    // (another tab signed in as bob): alice's request is not replayed as bob's.
    await expect(apiRequest('/alices-request')).rejects.toMatchObject({ status: 401 });
    expect(server.calls('GET /api/alices-request')).toHaveLength(1);
    expect(await screen.findByText('bob', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
    expect(queryClient.getQueryData(['bets', 'mine'])).toBeUndefined();
  });

  it('tells the browser’s other tabs when it logs out', async () => {
    api(player);
    const otherTab = new BroadcastChannel('fairplay.logout');
    const heard = new Promise((resolve) => {
      otherTab.onmessage = (event) => {
        resolve(event.data);
      };
    });
    const { user } = renderApp('/');
    await user.click(await screen.findByRole('button', { name: 'Log Out' }));
    await expect(heard).resolves.toBe('logout');
    otherTab.close();
  });

  it('logs out when another tab of the browser logs out (they share the session)', async () => {
    const server = api(player);
    renderApp('/');
    expect(await screen.findByText('alice', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
    // The other tab's logout cleared the cookies of the browser.
    document.cookie = 'fairplay_signed_in=; Max-Age=0; path=/';
    const otherTab = new BroadcastChannel('fairplay.logout');
    otherTab.postMessage('logout');
    otherTab.close();
    expect(await screen.findByRole('button', { name: 'Sign In' })).toBeInTheDocument();
    // That tab ended the session: nothing is left to end here.
    expect(server.calls('POST /api/auth/logout')).toHaveLength(0);
    expect(getAccessToken()).toBeNull();
  });

  it('signs in when another tab of the browser signs in (it shares the session cookie)', async () => {
    const server = api(null, {
      'POST /api/auth/refresh': () => json({ token: 'from-cookie', user: player }),
    });
    renderApp('/');
    expect(await screen.findByRole('button', { name: 'Sign In' })).toBeInTheDocument();
    // The other tab's sign-in set the cookies of the browser.
    setSignedInCookie();
    const otherTab = new BroadcastChannel('fairplay.login');
    otherTab.postMessage({ tab: 'other', userId: player._id });
    otherTab.close();
    expect(await screen.findByText('alice', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
    expect(server.calls('POST /api/auth/refresh')[0]?.body).toEqual({});
    expect(getAccessToken()).toBe('from-cookie');
  });

  it('follows another tab that signs in as another player: this tab’s player is dropped', async () => {
    const bob = { ...player, _id: '7d1c2a9e-0000-4000-8000-000000000003', username: 'bob' };
    const server = api(player, { 'POST /api/auth/refresh': () => json({ token: 'bobs', user: bob }) });
    renderApp('/');
    expect(await screen.findByText('alice', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
    const otherTab = new BroadcastChannel('fairplay.login');
    otherTab.postMessage({ tab: 'other', userId: bob._id });
    otherTab.close();
    expect(await screen.findByText('bob', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
    expect(server.calls('POST /api/auth/refresh')).toHaveLength(1);
    expect(getAccessToken()).toBe('bobs');
  });

  it('follows another tab that signs the same player in again: only the access token is replaced', async () => {
    const server = api(player, { 'POST /api/auth/refresh': () => json({ token: 'new-session', user: player }) });
    renderApp('/');
    expect(await screen.findByText('alice', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
    const otherTab = new BroadcastChannel('fairplay.login');
    otherTab.postMessage({ tab: 'other', userId: player._id });
    otherTab.close();
    await waitFor(() => {
      expect(getAccessToken()).toBe('new-session');
    });
    expect(server.calls('POST /api/auth/refresh')).toHaveLength(1);
    expect(server.calls('GET /api/auth/user')).toHaveLength(1);
    expect(screen.getByText('alice', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
  });

  it('tells the browser’s other tabs when it signs in (and does not follow its own message)', async () => {
    const server = api(null, { 'POST /api/auth/login': () => json({ token: 'a', user: player }) });
    const otherTab = new BroadcastChannel('fairplay.login');
    const heard = new Promise((resolve) => {
      otherTab.onmessage = (event) => {
        resolve(event.data);
      };
    });
    const { user } = renderApp('/');
    await user.click(await screen.findByRole('button', { name: 'Sign In' }));
    const dialog = within(await screen.findByRole('dialog', { name: 'Sign In' }));
    await user.type(dialog.getByLabelText('Username or Email'), 'alice');
    await user.type(dialog.getByLabelText('Password'), 'secret1');
    await user.click(dialog.getByRole('checkbox', { name: 'I am not a robot (development check)' }));
    await user.click(dialog.getByRole('button', { name: 'Sign In' }));
    await expect(heard).resolves.toMatchObject({ userId: player._id });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.calls('POST /api/auth/refresh')).toHaveLength(0);
    otherTab.close();
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
    expect(hasSession()).toBe(false);
  });

  it('a page load of a signed-in browser signs in by a refresh from the cookie, without asking /auth/user first', async () => {
    const server = api(null, { 'POST /api/auth/refresh': () => json({ token: 'from-cookie', user: player }) });
    setSignedInCookie();
    renderApp('/');
    expect(await screen.findByText('alice', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
    expect(server.requests.filter((r) => r.path.startsWith('/api/auth/') && r.path !== '/api/auth/config')).toEqual([
      expect.objectContaining({ path: '/api/auth/refresh', body: {} }),
    ]);
    expect(getAccessToken()).toBe('from-cookie');
  });

  it('a page load whose session the server refuses starts as a guest', async () => {
    const server = api(null, { 'POST /api/auth/refresh': () => json({ message: 'Invalid refresh token' }, 401) });
    setSignedInCookie();
    renderApp('/');
    expect(await screen.findByRole('button', { name: 'Sign In' })).toBeInTheDocument();
    expect(server.calls('POST /api/auth/refresh')).toHaveLength(1);
    expect(hasSession()).toBe(false);
  });

  it('a page load whose refresh the server cannot do keeps the session for later', async () => {
    const server = api(null, {
      'POST /api/auth/refresh': () => json({ message: 'Something went wrong. Please try again.' }, 503),
    });
    setSignedInCookie();
    renderApp('/');
    await waitFor(() => {
      expect(server.calls('POST /api/auth/refresh')).toHaveLength(1);
    });
    expect(await screen.findByRole('button', { name: 'Sign In' })).toBeInTheDocument();
    expect(hasSignedInCookie()).toBe(true);
    expect(hasSession()).toBe(true);
  });

  it('a guest’s page load sends no refresh', async () => {
    const server = api(null);
    renderApp('/');
    expect(await screen.findByRole('button', { name: 'Sign In' })).toBeInTheDocument();
    expect(server.calls('POST /api/auth/refresh')).toHaveLength(0);
    expect(server.calls('GET /api/auth/user')).toHaveLength(0);
  });

  it('refreshes the access token every 10 minutes while signed in', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    try {
      const server = api(player, {
        'POST /api/auth/refresh': () => json({ token: 'fresh', user: { ...player, balance: 99 } }),
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
      expect(server.calls('POST /api/auth/refresh')[0]?.body).toEqual({});
      expect(REFRESH_INTERVAL_MS).toBe(600_000);
    } finally {
      vi.useRealTimers();
    }
  });

  it('hands the access token it refreshed to the browser’s other tabs', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const otherTab = new BroadcastChannel('fairplay.token');
    try {
      const heard = new Promise((resolve) => {
        otherTab.onmessage = (event) => {
          resolve(event.data);
        };
      });
      api(player, { 'POST /api/auth/refresh': () => json({ token: 'fresh', user: player }) });
      renderApp('/');
      expect(await screen.findByText('alice', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
      act(() => {
        vi.advanceTimersByTime(REFRESH_INTERVAL_MS);
      });
      await expect(heard).resolves.toMatchObject({ userId: player._id, token: 'fresh' });
    } finally {
      otherTab.close();
      vi.useRealTimers();
    }
  });

  it('takes the access token another tab refreshed and skips its own turn: one refresh per interval per browser', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const otherTab = new BroadcastChannel('fairplay.token');
    try {
      const server = api(player, { 'POST /api/auth/refresh': () => json({ token: 'own', user: player }) });
      renderApp('/');
      expect(await screen.findByText('alice', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
      act(() => {
        vi.advanceTimersByTime(REFRESH_INTERVAL_MS - 4 * 60_000);
      });
      otherTab.postMessage({ tab: 'other', userId: player._id, token: 'shared' });
      await until(() => getAccessToken() === 'shared');
      // This tab's turn comes 4 minutes after the other tab's refresh: skipped.
      act(() => {
        vi.advanceTimersByTime(4 * 60_000);
      });
      // (A refresh would be sent within a few tens of milliseconds, after the session lock.)
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(server.calls('POST /api/auth/refresh')).toHaveLength(0);
      // The other tab went quiet: the next turn refreshes.
      act(() => {
        vi.advanceTimersByTime(REFRESH_INTERVAL_MS);
      });
      await until(() => server.calls('POST /api/auth/refresh').length === 1);
      await until(() => getAccessToken() === 'own');
      expect(getAccessToken()).toBe('own');
      // A token shared for another player is not taken.
      otherTab.postMessage({ tab: 'other', userId: 'someone-else', token: 'not-mine' });
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(getAccessToken()).toBe('own');
    } finally {
      otherTab.close();
      vi.useRealTimers();
    }
  });
});
