// The session's tokens (SPEC.md §3: "stored in the browser"). Everything else
// reads them through this module, which also tells subscribers when this tab
// signs in or out.
//
// The refresh token is in an HttpOnly cookie the server sets (the calls that
// ask for it are in lib/api-client): no script can read it, so one injected
// into the page can use the session while the page is open but cannot carry
// the refresh token away and keep the account for 30 days, as it could from
// memory or web storage. The access token lives in this module's memory, per
// tab: a reload or another tab gets its own by a refresh, which the cookie
// makes possible. What JavaScript sees of the cookie is the hint cookie
// fairplay_signed_in, which the server sets and clears along with it.
//
// The browser's tabs share the cookie, and its refresh token rotates: a
// retired one presented again ends the session (the server takes it for a
// stolen one), so two tabs refreshing at once would sign the browser out.
// The calls that send or replace it therefore hold a lock shared by the
// tabs (lib/api-client), and a tab tells the others when it signs in or out
// (lib/auth).
//
// A refresh token an older version left in localStorage (or parked in
// sessionStorage over a reload) is taken out of there once and kept in memory
// until the first refresh, which sends it to move its session into the cookie.

const SIGNED_IN_COOKIE = 'fairplay_signed_in';
const LEGACY_ACCESS_KEY = 'fairplay.token';
const LEGACY_REFRESH_KEY = 'fairplay.refreshToken';

type Listener = () => void;
const listeners = new Set<Listener>();

let access: string | null = null;
let legacyRefresh: string | null = null;

/** signedInCookie reports whether the server's hint says the browser holds a session cookie. */
function signedInCookie(): boolean {
  if (typeof document === 'undefined') return false;
  return document.cookie.split(';').some((part) => {
    const [key, value = ''] = part.trim().split('=');
    return key === SIGNED_IN_COOKIE && value !== '';
  });
}

/**
 * forgetSignedInCookie drops the hint when this tab finds the session over,
 * also when the server's answer that clears it never came (a logout while
 * offline): the next page load then starts as a guest instead of refreshing.
 */
function forgetSignedInCookie(): void {
  if (typeof document === 'undefined' || !signedInCookie()) return;
  const secure = window.location.protocol === 'https:' ? '; Secure' : '';
  document.cookie = `${SIGNED_IN_COOKIE}=; Max-Age=0; Path=/; SameSite=Strict${secure}`;
}

/** takeLegacy removes the tokens an older version kept in web storage and returns its refresh token. */
function takeLegacy(storage: () => Storage): string | null {
  try {
    const store = storage();
    const refreshToken = store.getItem(LEGACY_REFRESH_KEY);
    store.removeItem(LEGACY_ACCESS_KEY);
    store.removeItem(LEGACY_REFRESH_KEY);
    return refreshToken;
  } catch {
    return null; // storage disabled: nothing was left there
  }
}

function load(): void {
  if (typeof window === 'undefined') return;
  // Both are emptied; a token parked over a reload is the newer one.
  const parked = takeLegacy(() => window.sessionStorage);
  const kept = takeLegacy(() => window.localStorage);
  legacyRefresh = parked ?? kept;
}

load();

export function getAccessToken(): string | null {
  return access;
}

/** getLegacyRefreshToken is the refresh token an older version left, until a refresh has moved it into the cookie. */
export function getLegacyRefreshToken(): string | null {
  return legacyRefresh;
}

/** hasSession reports whether there is a session to use or to refresh. */
export function hasSession(): boolean {
  return access !== null || legacyRefresh !== null || signedInCookie();
}

function notify(): void {
  for (const listener of listeners) listener();
}

/**
 * setAccessToken keeps the access token of a sign-in or a refresh. Either
 * put the session in the cookie, so a legacy refresh token is no longer needed.
 */
export function setAccessToken(token: string): void {
  const changed = token !== access;
  access = token;
  legacyRefresh = null;
  if (changed) notify();
}

/** clearTokens signs this tab out: the session is over (refused, or logged out). */
export function clearTokens(): void {
  const signedIn = hasSession();
  access = null;
  legacyRefresh = null;
  forgetSignedInCookie();
  if (signedIn) notify();
}

/**
 * dropAccessToken forgets this tab's access token only: another tab ended
 * or replaced the session, and the cookies are as that tab left them.
 */
export function dropAccessToken(): void {
  if (access === null) return;
  access = null;
  notify();
}

/** subscribeTokens calls listener whenever this tab signs in or out, or its access token changes. */
export function subscribeTokens(listener: Listener): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}
