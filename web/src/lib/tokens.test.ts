import { clearTokens, getAccessToken, getRefreshToken, hasSession, setTokens, subscribeTokens } from './tokens';

function setVisibility(state: DocumentVisibilityState) {
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => state });
  document.dispatchEvent(new Event('visibilitychange'));
}

function stored() {
  return {
    session: [sessionStorage.getItem('fairplay.token'), sessionStorage.getItem('fairplay.refreshToken')],
    local: [localStorage.getItem('fairplay.token'), localStorage.getItem('fairplay.refreshToken')],
  };
}

afterEach(() => {
  setVisibility('visible');
});

describe('tokens', () => {
  it('live in memory while the page is shown: nothing in localStorage or sessionStorage', () => {
    setVisibility('visible');
    setTokens({ token: 'a1', refreshToken: 'r1' });
    expect(getAccessToken()).toBe('a1');
    expect(getRefreshToken()).toBe('r1');
    expect(hasSession()).toBe(true);
    expect(stored()).toEqual({ session: [null, null], local: [null, null] });
  });

  it('are parked in sessionStorage on pagehide (a reload) and taken out on pageshow', () => {
    setVisibility('visible');
    setTokens({ token: 'a1', refreshToken: 'r1' });
    window.dispatchEvent(new Event('pagehide'));
    expect(stored().session).toEqual(['a1', 'r1']);
    window.dispatchEvent(new Event('pageshow'));
    expect(stored().session).toEqual([null, null]);
    expect(getRefreshToken()).toBe('r1');
  });

  it('are parked while the tab is hidden, follow refreshes there, and are taken out when it is shown', () => {
    setVisibility('visible');
    setTokens({ token: 'a1', refreshToken: 'r1' });
    setVisibility('hidden');
    expect(stored().session).toEqual(['a1', 'r1']);
    setTokens({ token: 'a2', refreshToken: 'r2' });
    expect(stored().session).toEqual(['a2', 'r2']);
    clearTokens();
    expect(stored().session).toEqual([null, null]);
    setTokens({ token: 'a3', refreshToken: 'r3' });
    setVisibility('visible');
    expect(stored()).toEqual({ session: [null, null], local: [null, null] });
    expect(getAccessToken()).toBe('a3');
  });

  it('tell subscribers when they change, and only then', () => {
    const seen: string[] = [];
    const stop = subscribeTokens(() => seen.push(getRefreshToken() ?? 'none'));
    setTokens({ token: 'a1', refreshToken: 'r1' });
    setTokens({ token: 'a1', refreshToken: 'r1' });
    setTokens({ token: 'a2', refreshToken: 'r2' });
    clearTokens();
    clearTokens();
    stop();
    setTokens({ token: 'a3', refreshToken: 'r3' });
    expect(seen).toEqual(['r1', 'r2', 'none']);
  });

  // These two load the module again, whose copies stay subscribed to the page's events: keep them last.
  it('come back after a reload of the tab from its sessionStorage', async () => {
    setTokens({ token: 'a1', refreshToken: 'r1' });
    window.dispatchEvent(new Event('pagehide'));
    localStorage.setItem('fairplay.token', 'old-access');
    localStorage.setItem('fairplay.refreshToken', 'old-refresh');
    vi.resetModules();
    const reloaded = await import('./tokens');
    expect(reloaded.getAccessToken()).toBe('a1');
    expect(reloaded.getRefreshToken()).toBe('r1');
    // Taken out again at once (a tab duplicated now starts signed out), and
    // what an older version left in localStorage is gone.
    expect(stored()).toEqual({ session: [null, null], local: [null, null] });
    reloaded.clearTokens();
  });

  it('are taken over once from the localStorage of an older version, which is emptied', async () => {
    localStorage.setItem('fairplay.token', 'old-access');
    localStorage.setItem('fairplay.refreshToken', 'old-refresh');
    vi.resetModules();
    const upgraded = await import('./tokens');
    expect(upgraded.getAccessToken()).toBe('old-access');
    expect(upgraded.getRefreshToken()).toBe('old-refresh');
    expect(stored()).toEqual({ session: [null, null], local: [null, null] });
    upgraded.clearTokens();
  });
});
