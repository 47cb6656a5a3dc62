import { deferred, hasSignedInCookie, json, mockApi, setCsrfCookie, setSignedInCookie } from '@/testing/mock-api';
import { installWebLocks, type FakeWebLocks } from '@/testing/web-locks';
import { ApiError, apiRequest, errorMessage, refreshSession } from './api-client';
import { LEASE_KEY, LEASE_MS } from './session-lock';
import { clearTokens, dropAccessToken, getAccessToken, getSessionUserId, hasSession, setAccessToken } from './tokens';

const CSRF = 'csrf-token-value-that-is-long-enough-000';
const COOKIE_HEADER = 'x-fairplay-refresh-cookie';

/** webStorage lists everything in localStorage and sessionStorage. */
function webStorage(): string[] {
  return [localStorage, sessionStorage].flatMap((store) =>
    Object.keys(store).map((key) => `${key}=${store.getItem(key) ?? ''}`),
  );
}

/** signedIn makes this tab signed in with the access token given (and the hint of the session cookie). */
function signedIn(token: string) {
  setSignedInCookie();
  setAccessToken(token);
}

describe('apiRequest', () => {
  it('sends the bearer token, and the CSRF cookie as a header on non-GET calls only', async () => {
    signedIn('access');
    setCsrfCookie(CSRF);
    const api = mockApi({
      'GET /api/auth/user': () => json({ user: { username: 'a' } }),
      'POST /api/auth/revoke-session': () => json({ message: 'ok' }),
    });

    await apiRequest('/auth/user');
    await apiRequest('/auth/revoke-session', { method: 'POST', body: { sessionId: 's1' } });

    const [get, post] = api.requests;
    expect(get?.headers.authorization).toBe('Bearer access');
    expect(get?.headers['x-csrf-token']).toBeUndefined();
    expect(post?.headers.authorization).toBe('Bearer access');
    expect(post?.headers['x-csrf-token']).toBe(CSRF);
    expect(post?.headers['content-type']).toBe('application/json');
    expect(post?.body).toEqual({ sessionId: 's1' });
    expect(get?.headers[COOKIE_HEADER]).toBeUndefined();
    expect(post?.headers[COOKIE_HEADER]).toBeUndefined();
  });

  it('asks for the refresh token in the session cookie on login, register, refresh and logout only', async () => {
    setCsrfCookie(CSRF);
    signedIn('access');
    const api = mockApi({
      'POST /api/auth/login': () => json({ token: 't', user: {} }),
      'POST /api/auth/register': () => json({ token: 't', user: {} }),
      'POST /api/auth/refresh': () => json({ token: 't' }),
      'POST /api/auth/logout': () => json({ message: 'ok' }),
      'POST /api/auth/revoke-other-sessions': () => json({ message: 'ok' }),
      'GET /api/auth/sessions': () => json({ sessions: [] }),
    });
    await apiRequest('/auth/login', { method: 'POST', body: {} });
    await apiRequest('/auth/register', { method: 'POST', body: {} });
    await refreshSession();
    await apiRequest('/auth/logout', { method: 'POST', body: {} });
    await apiRequest('/auth/revoke-other-sessions', { method: 'POST', body: {} });
    await apiRequest('/auth/sessions');
    expect(api.requests.map((r) => [r.path, r.headers[COOKIE_HEADER]])).toEqual([
      ['/api/auth/login', '1'],
      ['/api/auth/register', '1'],
      ['/api/auth/refresh', '1'],
      ['/api/auth/logout', '1'],
      ['/api/auth/revoke-other-sessions', undefined],
      ['/api/auth/sessions', undefined],
    ]);
    expect(api.requests.every((r) => JSON.stringify(r.body ?? {}) === '{}')).toBe(true);
  });

  it('asks GET /api/csrf for the cookie when it is missing', async () => {
    const api = mockApi({
      'GET /api/csrf': () => {
        setCsrfCookie(CSRF);
        return json({ csrfToken: CSRF });
      },
      'POST /api/auth/login': () => json({ token: 't', refreshToken: 'r', user: {} }),
    });

    await apiRequest('/auth/login', { method: 'POST', body: {} });

    expect(api.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /api/csrf', 'POST /api/auth/login']);
    expect(api.calls('POST /api/auth/login')[0]?.headers['x-csrf-token']).toBe(CSRF);
  });

  it('retries once with a fresh cookie when the server rejects the CSRF token', async () => {
    setCsrfCookie('stale-token-value-that-is-long-enough-0000');
    let attempts = 0;
    const api = mockApi({
      'GET /api/csrf': () => {
        setCsrfCookie(CSRF);
        return json({ csrfToken: CSRF });
      },
      'POST /api/auth/logout': (req) => {
        attempts++;
        return req.headers['x-csrf-token'] === CSRF
          ? json({ message: 'ok' })
          : json({ message: 'Invalid CSRF token' }, 403);
      },
    });

    await apiRequest('/auth/logout', { method: 'POST', body: {} });

    expect(attempts).toBe(2);
    expect(api.calls('GET /api/csrf')).toHaveLength(1);
  });

  it('passes over a planted short or undecodable cookie, and retries with the token the server read', async () => {
    // Cookies planted for the parent domain come first in document.cookie.
    const cookies = vi.spyOn(document, 'cookie', 'get');
    try {
      cookies.mockReturnValue(`fairplay_csrf=%; fairplay_csrf=short; fairplay_csrf=${CSRF}`);
      const api = mockApi({ 'POST /api/auth/logout': () => json({ message: 'ok' }) });
      await apiRequest('/auth/logout', { method: 'POST', body: {} });
      expect(api.calls('POST /api/auth/logout')[0]?.headers['x-csrf-token']).toBe(CSRF);

      // A long planted one the server does not accept: the retry takes the
      // token GET /api/csrf answers, not the first cookie again.
      const served = 'served-token-value-that-is-long-enough-000';
      cookies.mockReturnValue(`fairplay_csrf=planted-token-value-that-is-long-enough-00; fairplay_csrf=${served}`);
      let attempts = 0;
      const retry = mockApi({
        'GET /api/csrf': () => json({ csrfToken: served }),
        'POST /api/auth/logout': (req) => {
          attempts++;
          return req.headers['x-csrf-token'] === served
            ? json({ message: 'ok' })
            : json({ message: 'Invalid CSRF token' }, 403);
        },
      });
      await apiRequest('/auth/logout', { method: 'POST', body: {} });
      expect(attempts).toBe(2);
      expect(retry.calls('POST /api/auth/logout')[1]?.headers['x-csrf-token']).toBe(served);
    } finally {
      cookies.mockRestore();
    }
  });

  it('turns an error body into an ApiError with the server message', async () => {
    mockApi({ 'GET /api/auth/sessions': () => json({ message: 'Nope' }, 500) });
    const err: unknown = await apiRequest('/auth/sessions').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(500);
    expect(errorMessage(err, 'fallback')).toBe('Nope');
  });

  it('falls back when the body has no message or the network fails', async () => {
    const api = mockApi({ 'GET /api/a': () => new Response('oops', { status: 502 }) });
    expect(errorMessage(await apiRequest('/a').catch((e: unknown) => e), 'Failed to load users')).toBe(
      'Failed to load users',
    );
    api.on('GET /api/b', () => {
      throw new TypeError('Failed to fetch');
    });
    const err = await apiRequest('/b').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(0);
  });
});

describe('refresh on 401', () => {
  beforeEach(() => {
    setCsrfCookie(CSRF);
    signedIn('old');
  });

  function authorizedOnly(token: string) {
    return (req: { headers: Record<string, string> }) =>
      req.headers.authorization === `Bearer ${token}` ? json({ ok: true }) : json({ message: 'Token expired' }, 401);
  }

  it('concurrent 401s share exactly one refresh, then each request is retried once', async () => {
    const release = deferred<Response>();
    const api = mockApi({
      'GET /api/auth/user': authorizedOnly('new'),
      'GET /api/auth/sessions': authorizedOnly('new'),
      'POST /api/auth/change-password': authorizedOnly('new'),
      'POST /api/auth/refresh': () => release.promise,
    });

    const pending = Promise.all([
      apiRequest('/auth/user'),
      apiRequest('/auth/sessions'),
      apiRequest('/auth/change-password', { method: 'POST', body: {} }),
      apiRequest('/auth/user'),
    ]);
    await vi.waitFor(() => {
      expect(api.calls('POST /api/auth/refresh')).toHaveLength(1);
    });
    release.resolve(json({ token: 'new', user: { _id: 'u' } }));

    await expect(pending).resolves.toHaveLength(4);
    expect(api.calls('POST /api/auth/refresh')).toHaveLength(1);
    // The refresh token is the session cookie's: the body names none.
    expect(api.calls('POST /api/auth/refresh')[0]?.body).toEqual({});
    expect(api.calls('POST /api/auth/refresh')[0]?.headers[COOKIE_HEADER]).toBe('1');
    expect(getAccessToken()).toBe('new');
    // Each of the four was sent twice: once with the old token, once with the new.
    const retried = api.requests.filter((r) => r.path !== '/api/auth/refresh');
    expect(retried.filter((r) => r.headers.authorization === 'Bearer old')).toHaveLength(4);
    expect(retried.filter((r) => r.headers.authorization === 'Bearer new')).toHaveLength(4);
  });

  it('a 401 that arrives after the refresh finished reuses the new token', async () => {
    const late = deferred<Response>();
    let lateSent = false;
    const api = mockApi({
      'GET /api/fast': authorizedOnly('new'),
      'GET /api/slow': (req) => {
        if (req.headers.authorization === 'Bearer new') return json({ ok: true });
        lateSent = true;
        return late.promise;
      },
      'POST /api/auth/refresh': () => json({ token: 'new' }),
    });

    const slow = apiRequest('/slow');
    await vi.waitFor(() => {
      expect(lateSent).toBe(true);
    });
    await apiRequest('/fast');
    late.resolve(json({ message: 'Token expired' }, 401));
    await expect(slow).resolves.toEqual({ ok: true });
    expect(api.calls('POST /api/auth/refresh')).toHaveLength(1);
  });

  it('a refused refresh clears the tokens and the request fails with 401', async () => {
    const api = mockApi({
      'GET /api/auth/user': () => json({ message: 'Token expired' }, 401),
      'POST /api/auth/refresh': () => json({ message: 'Invalid refresh token' }, 401),
    });

    const results = await Promise.allSettled([apiRequest('/auth/user'), apiRequest('/auth/user')]);

    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    const reason: unknown = results[0].status === 'rejected' ? results[0].reason : undefined;
    expect(reason).toBeInstanceOf(ApiError);
    expect((reason as ApiError).status).toBe(401);
    expect(api.calls('POST /api/auth/refresh')).toHaveLength(1);
    expect(api.calls('GET /api/auth/user')).toHaveLength(2);
    expect(getAccessToken()).toBeNull();
    expect(hasSignedInCookie()).toBe(false);
    expect(hasSession()).toBe(false);
  });

  it('a guest’s 401 is final: there is no session to refresh', async () => {
    clearTokens();
    const api = mockApi({ 'GET /api/auth/user': () => json({ message: 'No authentication token' }, 401) });
    await expect(apiRequest('/auth/user')).rejects.toMatchObject({ status: 401 });
    expect(api.calls('POST /api/auth/refresh')).toHaveLength(0);
  });

  it('never refreshes for login, register, logout or refresh itself', async () => {
    const api = mockApi({
      'POST /api/auth/login': () => json({ message: 'Invalid username or password' }, 401),
      'POST /api/auth/register': () => json({ message: 'nope' }, 401),
      'POST /api/auth/logout': () => json({ message: 'Invalid refresh token' }, 401),
      'POST /api/auth/refresh': () => json({ message: 'Invalid refresh token' }, 401),
    });

    await expect(apiRequest('/auth/login', { method: 'POST', body: {} })).rejects.toMatchObject({
      status: 401,
      serverMessage: 'Invalid username or password',
    });
    await expect(apiRequest('/auth/register', { method: 'POST', body: {} })).rejects.toBeInstanceOf(ApiError);
    await expect(apiRequest('/auth/logout', { method: 'POST', body: {} })).rejects.toBeInstanceOf(ApiError);
    expect(api.calls('POST /api/auth/refresh')).toHaveLength(0);
    expect(getAccessToken()).toBe('old');

    await expect(refreshSession()).resolves.toBeNull();
    expect(api.calls('POST /api/auth/refresh')).toHaveLength(1);
  });

  it('keeps the session when the refresh could not reach the server', async () => {
    mockApi({
      'POST /api/auth/refresh': () => {
        throw new TypeError('Failed to fetch');
      },
    });
    await expect(refreshSession()).rejects.toMatchObject({ status: 0 });
    expect(getAccessToken()).toBe('old');
    expect(hasSignedInCookie()).toBe(true);
  });

  it.each([
    [429, 'Too many requests, please try again later'],
    [503, 'Something went wrong. Please try again.'],
  ])('keeps the session when the server answers the refresh %i', async (status, message) => {
    mockApi({ 'POST /api/auth/refresh': () => json({ message }, status) });
    await expect(refreshSession()).rejects.toMatchObject({ status, serverMessage: message });
    expect(getAccessToken()).toBe('old');
    expect(hasSignedInCookie()).toBe(true);
    expect(hasSession()).toBe(true);
  });

  it('a 401 whose refresh the server could not do fails with the refresh’s error, and keeps the session', async () => {
    mockApi({
      'GET /api/auth/user': () => json({ message: 'Token expired' }, 401),
      'POST /api/auth/refresh': () => json({ message: 'Something went wrong. Please try again.' }, 503),
    });
    await expect(apiRequest('/auth/user')).rejects.toMatchObject({ status: 503 });
    expect(hasSession()).toBe(true);
  });
});

describe('another player’s session', () => {
  it('a request of one player is not replayed as another that a tab signed in while it was under way', async () => {
    setCsrfCookie(CSRF);
    setSignedInCookie();
    setAccessToken('alices', 'alice');
    const api = mockApi({
      'POST /api/bets': () => {
        // Meanwhile another tab logged out and signed bob in; this tab followed.
        dropAccessToken();
        setAccessToken('bobs', 'bob');
        return json({ message: 'Session expired, please log in again' }, 401);
      },
    });
    await expect(apiRequest('/bets', { method: 'POST', body: { amount: 1 } })).rejects.toMatchObject({ status: 401 });
    expect(api.calls('POST /api/bets')).toHaveLength(1);
  });

  it('the player of an access token is the token’s own when the answer names none', () => {
    const claims = btoa(JSON.stringify({ sub: 'carol', sid: 's' })).replace(/=+$/, '');
    setAccessToken(`header.${claims}.signature`);
    expect(getSessionUserId()).toBe('carol');
    setAccessToken('not-a-jwt');
    expect(getSessionUserId()).toBeNull();
  });
});

describe('the session cookie', () => {
  let locks: FakeWebLocks | undefined;

  beforeEach(() => {
    setCsrfCookie(CSRF);
    signedIn('old');
  });

  afterEach(() => {
    locks?.uninstall();
    locks = undefined;
  });

  it('a refresh keeps only the access token, even if the answer carries a refresh token', async () => {
    mockApi({ 'POST /api/auth/refresh': () => json({ token: 'new', refreshToken: 'leaked' }) });
    await refreshSession();
    expect(getAccessToken()).toBe('new');
    expect(webStorage()).toEqual([]);
    window.dispatchEvent(new PageTransitionEvent('pagehide'));
    expect(webStorage().join('\n')).not.toContain('leaked');
    window.dispatchEvent(new PageTransitionEvent('pageshow'));
  });

  it('a refresh is sent holding the session lock the browser’s tabs share', async () => {
    locks = installWebLocks();
    const held: boolean[] = [];
    mockApi({
      'POST /api/auth/refresh': () => {
        held.push(locks?.isHeld('fairplay.session') ?? false);
        return json({ token: 'new' });
      },
    });
    await refreshSession();
    expect(locks.requested).toEqual(['fairplay.session']);
    expect(held).toEqual([true]);
  });

  it('a refresh waits while another tab holds the session lock (it may be rotating the cookie)', async () => {
    locks = installWebLocks();
    const otherTab = deferred<undefined>();
    void navigator.locks.request('fairplay.session', () => otherTab.promise);
    const api = mockApi({ 'POST /api/auth/refresh': () => json({ token: 'new' }) });
    const refreshed = refreshSession();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(api.calls('POST /api/auth/refresh')).toHaveLength(0);
    otherTab.resolve(undefined);
    await expect(refreshed).resolves.toMatchObject({ token: 'new' });
    expect(api.calls('POST /api/auth/refresh')).toHaveLength(1);
  });

  it('logout and login are sent holding the session lock too; other calls are not', async () => {
    locks = installWebLocks();
    const held: [string, boolean][] = [];
    const record = (req: { path: string }) => {
      held.push([req.path, locks?.isHeld('fairplay.session') ?? false]);
      return json({ token: 't', user: {} });
    };
    mockApi({ 'POST /api/auth/logout': record, 'POST /api/auth/login': record, 'GET /api/auth/sessions': record });
    await apiRequest('/auth/logout', { method: 'POST', body: {} });
    await apiRequest('/auth/login', { method: 'POST', body: {} });
    await apiRequest('/auth/sessions');
    expect(held).toEqual([
      ['/api/auth/logout', true],
      ['/api/auth/login', true],
      ['/api/auth/sessions', false],
    ]);
  });

  it('without the Web Locks API (plain http) a refresh waits for another tab’s lease in localStorage', async () => {
    expect('locks' in navigator).toBe(false);
    localStorage.setItem(LEASE_KEY, JSON.stringify({ tab: 'other-tab', until: Date.now() + LEASE_MS }));
    const leases: (string | null)[] = [];
    const api = mockApi({
      'POST /api/auth/refresh': () => {
        leases.push(localStorage.getItem(LEASE_KEY));
        return json({ token: 'new' });
      },
    });
    const refreshed = refreshSession();
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(api.calls('POST /api/auth/refresh')).toHaveLength(0);
    // The other tab is done.
    localStorage.removeItem(LEASE_KEY);
    await expect(refreshed).resolves.toMatchObject({ token: 'new' });
    expect(api.calls('POST /api/auth/refresh')).toHaveLength(1);
    expect(leases).toHaveLength(1);
    expect(leases[0]).not.toContain('other-tab');
    expect(webStorage(), 'the lease is given back').toEqual([]);
  });

  it('a refresh token an older version left is sent once, to move its session into the cookie', async () => {
    clearTokens(); // a browser without a session cookie yet
    localStorage.setItem('fairplay.refreshToken', 'legacy-refresh');
    vi.resetModules();
    const tokens = await import('./tokens');
    const client = await import('./api-client');
    expect(localStorage.getItem('fairplay.refreshToken')).toBeNull();
    let answer = () => json({ message: 'Something went wrong. Please try again.' }, 503);
    const api = mockApi({ 'POST /api/auth/refresh': () => answer() });
    // Not answered: kept for the next try.
    await expect(client.refreshSession()).rejects.toMatchObject({ status: 503 });
    answer = () => json({ token: 'migrated' });
    await client.refreshSession();
    await client.refreshSession();
    expect(api.calls('POST /api/auth/refresh').map((r) => [r.body, r.headers[COOKIE_HEADER]])).toEqual([
      [{ refreshToken: 'legacy-refresh' }, '1'],
      [{ refreshToken: 'legacy-refresh' }, '1'],
      [{}, '1'],
    ]);
    expect(tokens.getAccessToken()).toBe('migrated');
    expect(tokens.getLegacyRefreshToken()).toBeNull();
  });
});
