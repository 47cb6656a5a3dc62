import { hasSignedInCookie, setSignedInCookie } from '@/testing/mock-api';
import {
  clearTokens,
  dropAccessToken,
  getAccessToken,
  getLegacyRefreshToken,
  hasSession,
  setAccessToken,
  subscribeTokens,
} from './tokens';

const KEYS = ['fairplay.token', 'fairplay.refreshToken'];

/** stored is every token-like value in web storage, by where it is. */
function stored() {
  return {
    session: KEYS.map((k) => sessionStorage.getItem(k)),
    local: KEYS.map((k) => localStorage.getItem(k)),
  };
}

const nothingStored = { session: [null, null], local: [null, null] };

function setVisibility(state: DocumentVisibilityState) {
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => state });
  document.dispatchEvent(new Event('visibilitychange'));
}

afterEach(() => {
  setVisibility('visible');
});

describe('tokens', () => {
  it('keep no refresh token in web storage; the access token is parked in this tab’s sessionStorage on pagehide only', () => {
    setSignedInCookie();
    setAccessToken('a1', 'alice');
    expect(getAccessToken()).toBe('a1');
    expect(hasSession()).toBe(true);
    setVisibility('hidden');
    expect(Object.keys(sessionStorage), 'nothing while the page is only hidden').toEqual([]);
    // Into the back/forward cache: the page keeps its memory, nothing is parked.
    window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: true }));
    expect(Object.keys(sessionStorage)).toEqual([]);
    window.dispatchEvent(new PageTransitionEvent('pagehide'));
    expect(stored()).toEqual(nothingStored);
    expect(Object.keys(localStorage)).toEqual([]);
    // For a reload: the access token only (15 minutes, what a script can get by a refresh anyway).
    expect(JSON.parse(sessionStorage.getItem('fairplay.accessToken') ?? 'null')).toMatchObject({
      token: 'a1',
      userId: 'alice',
    });
    window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true }));
    expect(Object.keys(sessionStorage), 'taken out again when the page is shown').toEqual([]);
    // Nothing but the hint among the cookies JavaScript can read.
    expect(document.cookie).not.toContain('a1');
  });

  it('have a session with an access token, or with the hint cookie alone (a page load of a signed-in browser)', () => {
    expect(hasSession()).toBe(false);
    setSignedInCookie();
    expect(hasSession()).toBe(true);
    expect(getAccessToken()).toBeNull();
  });

  it('signing out forgets the access token and the hint cookie', () => {
    setSignedInCookie();
    setAccessToken('a1');
    clearTokens();
    expect(getAccessToken()).toBeNull();
    expect(hasSignedInCookie()).toBe(false);
    expect(hasSession()).toBe(false);
  });

  it('dropping the access token (another tab ended or replaced the session) leaves the cookies alone', () => {
    setSignedInCookie();
    setAccessToken('a1');
    dropAccessToken();
    expect(getAccessToken()).toBeNull();
    expect(hasSignedInCookie()).toBe(true);
  });

  it('tell subscribers when this tab signs in, its access token changes or it signs out, and only then', () => {
    const seen: string[] = [];
    const stop = subscribeTokens(() => seen.push(getAccessToken() ?? 'none'));
    setSignedInCookie();
    setAccessToken('a1');
    setAccessToken('a1');
    setAccessToken('a2');
    clearTokens();
    clearTokens();
    dropAccessToken();
    stop();
    setAccessToken('a3');
    expect(seen).toEqual(['a1', 'a2', 'none']);
  });

  it('signing out a tab that is signed out tells no one', () => {
    expect(getLegacyRefreshToken()).toBeNull();
    const seen = vi.fn();
    const stop = subscribeTokens(seen);
    clearTokens();
    stop();
    expect(seen).not.toHaveBeenCalled();
  });

  // These load the module again, whose copies stay in memory: keep them last.
  it('a reload takes the parked access token back, once, while the browser has the session cookie', async () => {
    setSignedInCookie();
    const park = (at: number) => {
      sessionStorage.setItem('fairplay.accessToken', JSON.stringify({ token: 'parked', userId: 'alice', at }));
    };
    park(Date.now() - 1000);
    vi.resetModules();
    const reloaded = await import('./tokens');
    expect(reloaded.getAccessToken()).toBe('parked');
    expect(reloaded.getSessionUserId()).toBe('alice');
    expect(Object.keys(sessionStorage)).toEqual([]);
    // Parked a minute ago (a closed tab reopened): its session may have ended since.
    park(Date.now() - 60_000);
    vi.resetModules();
    expect((await import('./tokens')).getAccessToken()).toBeNull();
    expect(Object.keys(sessionStorage)).toEqual([]);
    // Signed out meanwhile (no hint): a parked token is not taken.
    reloaded.clearTokens();
    park(Date.now());
    vi.resetModules();
    expect((await import('./tokens')).getAccessToken()).toBeNull();
    expect(Object.keys(sessionStorage)).toEqual([]);
  });

  it('drop the refresh token an older version left when the browser already has a session cookie', async () => {
    setSignedInCookie();
    localStorage.setItem('fairplay.refreshToken', 'old-refresh');
    vi.resetModules();
    const upgraded = await import('./tokens');
    expect(upgraded.getLegacyRefreshToken()).toBeNull();
    expect(stored()).toEqual(nothingStored);
    upgraded.clearTokens();
  });

  it('take over once the refresh token an older version left in localStorage, and empty it', async () => {
    localStorage.setItem('fairplay.token', 'old-access');
    localStorage.setItem('fairplay.refreshToken', 'old-refresh');
    vi.resetModules();
    const upgraded = await import('./tokens');
    expect(stored()).toEqual(nothingStored);
    expect(upgraded.getLegacyRefreshToken()).toBe('old-refresh');
    // Until the first refresh moves it into the cookie, it is a session to refresh.
    expect(upgraded.getAccessToken()).toBeNull();
    expect(upgraded.hasSession()).toBe(true);
    // A sign-in or refresh puts the session in the cookie: the legacy token is no longer kept.
    upgraded.setAccessToken('a1');
    expect(upgraded.getLegacyRefreshToken()).toBeNull();
    vi.resetModules();
    expect((await import('./tokens')).getLegacyRefreshToken()).toBeNull();
  });

  it('take over the tokens an older version parked in sessionStorage over a reload, before localStorage', async () => {
    sessionStorage.setItem('fairplay.token', 'parked-access');
    sessionStorage.setItem('fairplay.refreshToken', 'parked-refresh');
    localStorage.setItem('fairplay.refreshToken', 'older-refresh');
    vi.resetModules();
    const upgraded = await import('./tokens');
    expect(upgraded.getLegacyRefreshToken()).toBe('parked-refresh');
    expect(stored()).toEqual(nothingStored);
    upgraded.clearTokens();
    expect(upgraded.getLegacyRefreshToken()).toBeNull();
    expect(upgraded.hasSession()).toBe(false);
  });
});
