import { deferred, json, mockApi, setCsrfCookie } from '@/testing/mock-api';
import { ApiError, apiRequest, errorMessage, refreshSession } from './api-client';
import { getAccessToken, getRefreshToken, setTokens } from './tokens';

const CSRF = 'csrf-token-value-that-is-long-enough-000';

describe('apiRequest', () => {
  it('sends the bearer token, and the CSRF cookie as a header on non-GET calls only', async () => {
    setTokens({ token: 'access', refreshToken: 'refresh' });
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

    await apiRequest('/auth/logout', { method: 'POST', body: { refreshToken: 'r' } });

    expect(attempts).toBe(2);
    expect(api.calls('GET /api/csrf')).toHaveLength(1);
  });

  it('passes over a planted short or undecodable cookie, and retries with the token the server read', async () => {
    // Cookies planted for the parent domain come first in document.cookie.
    const cookies = vi.spyOn(document, 'cookie', 'get');
    try {
      cookies.mockReturnValue(`fairplay_csrf=%; fairplay_csrf=short; fairplay_csrf=${CSRF}`);
      const api = mockApi({ 'POST /api/auth/logout': () => json({ message: 'ok' }) });
      await apiRequest('/auth/logout', { method: 'POST', body: { refreshToken: 'r' } });
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
      await apiRequest('/auth/logout', { method: 'POST', body: { refreshToken: 'r' } });
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
    setTokens({ token: 'old', refreshToken: 'refresh-1' });
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
    expect(api.calls('POST /api/auth/refresh')[0]?.body).toEqual({ refreshToken: 'refresh-1' });
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
    expect(getRefreshToken()).toBeNull();
  });

  it('never refreshes for login, register or refresh itself', async () => {
    const api = mockApi({
      'POST /api/auth/login': () => json({ message: 'Invalid username or password' }, 401),
      'POST /api/auth/register': () => json({ message: 'nope' }, 401),
      'POST /api/auth/refresh': () => json({ message: 'Invalid refresh token' }, 401),
    });

    await expect(apiRequest('/auth/login', { method: 'POST', body: {} })).rejects.toMatchObject({
      status: 401,
      serverMessage: 'Invalid username or password',
    });
    await expect(apiRequest('/auth/register', { method: 'POST', body: {} })).rejects.toBeInstanceOf(ApiError);
    expect(api.calls('POST /api/auth/refresh')).toHaveLength(0);
    expect(getRefreshToken()).toBe('refresh-1');

    await expect(refreshSession()).resolves.toBeNull();
    expect(api.calls('POST /api/auth/refresh')).toHaveLength(1);
  });

  it('keeps the tokens when the refresh could not reach the server', async () => {
    mockApi({
      'POST /api/auth/refresh': () => {
        throw new TypeError('Failed to fetch');
      },
    });
    await expect(refreshSession()).resolves.toBeNull();
    expect(getRefreshToken()).toBe('refresh-1');
  });

  it.each([
    [429, 'Too many requests, please try again later'],
    [503, 'Something went wrong. Please try again.'],
  ])('keeps the tokens when the server answers the refresh %i', async (status, message) => {
    mockApi({ 'POST /api/auth/refresh': () => json({ message }, status) });
    await expect(refreshSession()).resolves.toBeNull();
    expect(getRefreshToken()).toBe('refresh-1');
  });
});

describe('rotating refresh tokens', () => {
  beforeEach(() => {
    setCsrfCookie(CSRF);
    setTokens({ token: 'old', refreshToken: 'refresh-1' });
  });

  it('a refresh keeps the new refresh token, and the next refresh sends it', async () => {
    let n = 1;
    const api = mockApi({
      'POST /api/auth/refresh': () => {
        n += 1;
        return json({ token: `access-${n}`, refreshToken: `refresh-${n}` });
      },
    });
    await refreshSession();
    expect(getAccessToken()).toBe('access-2');
    expect(getRefreshToken()).toBe('refresh-2');
    await refreshSession();
    expect(api.calls('POST /api/auth/refresh').map((r) => r.body)).toEqual([
      { refreshToken: 'refresh-1' },
      { refreshToken: 'refresh-2' },
    ]);
    expect(getRefreshToken()).toBe('refresh-3');
  });

  it('keeps the refresh token it has when the answer carries none', async () => {
    mockApi({ 'POST /api/auth/refresh': () => json({ token: 'new' }) });
    await refreshSession();
    expect(getAccessToken()).toBe('new');
    expect(getRefreshToken()).toBe('refresh-1');
  });

  it('a call carrying the refresh token waits for a refresh under way and sends the new token', async () => {
    const release = deferred<Response>();
    const api = mockApi({
      'POST /api/auth/refresh': () => release.promise,
      'POST /api/auth/revoke-other-sessions': () => json({ message: 'ok' }),
    });
    const refreshed = refreshSession();
    const revoked = apiRequest('/auth/revoke-other-sessions', {
      method: 'POST',
      refreshTokenBody: (currentRefreshToken) => ({ currentRefreshToken }),
    });
    await vi.waitFor(() => {
      expect(api.calls('POST /api/auth/refresh')).toHaveLength(1);
    });
    expect(api.calls('POST /api/auth/revoke-other-sessions')).toHaveLength(0);
    release.resolve(json({ token: 'new', refreshToken: 'refresh-2' }));
    await refreshed;
    await revoked;
    expect(api.calls('POST /api/auth/revoke-other-sessions')[0]?.body).toEqual({ currentRefreshToken: 'refresh-2' });
  });

  it('a refresh waits until a call carrying the refresh token is answered', async () => {
    const release = deferred<Response>();
    const api = mockApi({
      'POST /api/auth/logout': () => release.promise,
      'POST /api/auth/refresh': () => json({ token: 'new', refreshToken: 'refresh-2' }),
    });
    const loggedOut = apiRequest('/auth/logout', {
      method: 'POST',
      refreshTokenBody: (refreshToken) => ({ refreshToken }),
    });
    await vi.waitFor(() => {
      expect(api.calls('POST /api/auth/logout')).toHaveLength(1);
    });
    const refreshed = refreshSession();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(api.calls('POST /api/auth/refresh')).toHaveLength(0);
    release.resolve(json({ message: 'ok' }));
    await loggedOut;
    await refreshed;
    expect(api.calls('POST /api/auth/logout')[0]?.body).toEqual({ refreshToken: 'refresh-1' });
    expect(api.calls('POST /api/auth/refresh')).toHaveLength(1);
  });

  it('a call carrying the refresh token, retried after a 401, sends the rotated token', async () => {
    const api = mockApi({
      'POST /api/auth/revoke-other-sessions': (req) =>
        req.headers.authorization === 'Bearer new' ? json({ message: 'ok' }) : json({ message: 'Token expired' }, 401),
      'POST /api/auth/refresh': () => json({ token: 'new', refreshToken: 'refresh-2' }),
    });
    await apiRequest('/auth/revoke-other-sessions', {
      method: 'POST',
      refreshTokenBody: (currentRefreshToken) => ({ currentRefreshToken }),
    });
    expect(api.calls('POST /api/auth/revoke-other-sessions').map((r) => r.body)).toEqual([
      { currentRefreshToken: 'refresh-1' },
      { currentRefreshToken: 'refresh-2' },
    ]);
  });
});
