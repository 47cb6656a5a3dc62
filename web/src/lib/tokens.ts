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
// A reload would cost a refresh, which rotates the cookie's token: one
// whose answer a second reload cuts off leaves the browser with a retired
// token, whose next use ends the session. So the access token (15 minutes,
// and no more than a script in the page can get by a refresh) is parked in
// this tab's sessionStorage on pagehide, and taken back, and removed, when
// the page is shown again.
//
// A refresh token an older version left in localStorage (or parked in
// sessionStorage over a reload) is taken out of there once and kept in memory
// until the first refresh, which sends it to move its session into the cookie,
// unless the browser already has a session cookie.
//
// A logout that did not clear the cookies (offline, or a CDN's refusal) may
// have left the session in the cookie: the tab signs out all the same, and
// the logout stays pending (LOGOUT_PENDING_KEY) until the hint is seen gone;
// each page load sends it again.

/**
 * The hint's names: the server sets the __Host- one over HTTPS
 * (FAIRPLAY_SECURE_COOKIES), the plain one otherwise. Both count, also over
 * https: a deployment behind a TLS proxy that forgot the setting would sign
 * every reload out. A planted plain hint (a sibling subdomain) costs a
 * guest's page load a refused refresh, and signing out drops the player
 * whatever it says (lib/auth).
 */
const SIGNED_IN_COOKIES = ['__Host-fairplay_signed_in', 'fairplay_signed_in'];
const PARKED_ACCESS_KEY = 'fairplay.accessToken';
export const LOGOUT_PENDING_KEY = 'fairplay.logoutPending';
const LEGACY_ACCESS_KEY = 'fairplay.token';
const LEGACY_REFRESH_KEY = 'fairplay.refreshToken';

type Listener = () => void;
const listeners = new Set<Listener>();

let access: string | null = null;
/** userId is the player whose session the access token belongs to (null when unknown). */
let userId: string | null = null;
let legacyRefresh: string | null = null;

/** signedInCookies are the names of the hint cookies the page can see. */
function signedInCookies(): string[] {
  if (typeof document === 'undefined') return [];
  return document.cookie
    .split(';')
    .map((part) => part.trim().split('='))
    .filter(([key, value = '']) => key !== undefined && SIGNED_IN_COOKIES.includes(key) && value !== '')
    .map(([key]) => key ?? '');
}

/** hasSignedInCookie reports whether the server's hint says the browser holds a session cookie. */
export function hasSignedInCookie(): boolean {
  return signedInCookies().length > 0;
}

/**
 * forgetSignedInCookie drops the hint when this tab finds the session over,
 * also when the server's answer that clears it never came (a logout while
 * offline): the next page load then starts as a guest instead of refreshing.
 */
function forgetSignedInCookie(): void {
  for (const name of signedInCookies()) {
    const secure = name.startsWith('__Host-') ? '; Secure' : '';
    document.cookie = `${name}=; Max-Age=0; Path=/; SameSite=Strict${secure}`;
  }
}

function storageSet(store: () => Storage, key: string, value: string | null): void {
  try {
    if (value === null) store().removeItem(key);
    else store().setItem(key, value);
  } catch {
    // A full or disabled storage: what it would keep is a convenience.
  }
}

function storageGet(store: () => Storage, key: string): string | null {
  try {
    return store().getItem(key);
  } catch {
    return null;
  }
}

/** PARK_MS is how long a parked access token is good for: a reload, not a tab reopened later. */
const PARK_MS = 30_000;

/** park keeps the access token in this tab's sessionStorage for a reload (pagehide). */
function park(event: PageTransitionEvent): void {
  // The back/forward cache keeps the page's memory: nothing to park.
  if (access === null || event.persisted) return;
  storageSet(() => window.sessionStorage, PARKED_ACCESS_KEY, JSON.stringify({ token: access, userId, at: Date.now() }));
}

/**
 * takeParked removes the parked access token and returns it if it was
 * parked moments ago: a tab reopened or restored later (which brings its
 * sessionStorage back) may belong to a session since ended or replaced.
 */
function takeParked(): { token: string; userId: string | null } | null {
  const raw = storageGet(() => window.sessionStorage, PARKED_ACCESS_KEY);
  storageSet(() => window.sessionStorage, PARKED_ACCESS_KEY, null);
  try {
    const parked = JSON.parse(raw ?? 'null') as { token?: unknown; userId?: unknown; at?: unknown } | null;
    if (typeof parked?.token !== 'string' || typeof parked.at !== 'number') return null;
    const age = Date.now() - parked.at;
    if (age < 0 || age > PARK_MS) return null;
    return { token: parked.token, userId: typeof parked.userId === 'string' ? parked.userId : null };
  } catch {
    return null;
  }
}

/** subjectOf is the player an access token (a JWT) names, null when it cannot be read. */
function subjectOf(token: string): string | null {
  try {
    const payload = token.split('.')[1];
    if (!payload) return null;
    const claims = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as { sub?: unknown };
    return typeof claims.sub === 'string' ? claims.sub : null;
  } catch {
    return null;
  }
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
  const parkedLegacy = takeLegacy(() => window.sessionStorage);
  const keptLegacy = takeLegacy(() => window.localStorage);
  // With a session cookie already, the old token would replace it.
  legacyRefresh = hasSignedInCookie() ? null : (parkedLegacy ?? keptLegacy);
  const parked = takeParked();
  if (parked && hasSignedInCookie()) {
    access = parked.token;
    userId = parked.userId;
  }
  window.addEventListener('pagehide', park);
  window.addEventListener('pageshow', () => {
    storageSet(() => window.sessionStorage, PARKED_ACCESS_KEY, null);
  });
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
  return access !== null || legacyRefresh !== null || hasSignedInCookie();
}

function notify(): void {
  for (const listener of listeners) listener();
}

/** getSessionUserId is the player whose session this tab's access token belongs to, null when unknown. */
export function getSessionUserId(): string | null {
  return userId;
}

/**
 * setAccessToken keeps the access token of a sign-in or a refresh, and the
 * player of its session: the one the answer named, else the token's own.
 * Either put the session in the cookie, so a legacy refresh token is no
 * longer needed.
 */
export function setAccessToken(token: string, sessionUserId?: string): void {
  const nextUser = sessionUserId ?? subjectOf(token);
  const changed = token !== access || nextUser !== userId;
  access = token;
  userId = nextUser;
  legacyRefresh = null;
  if (changed) notify();
}

/** clearTokens signs this tab out: the session is over (refused, or logged out). */
export function clearTokens(): void {
  const signedIn = hasSession();
  access = null;
  userId = null;
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
  userId = null;
  notify();
}

/** markLogoutPending remembers (or forgets) a logout that has not cleared the cookies yet. */
export function markLogoutPending(pending: boolean): void {
  storageSet(() => window.localStorage, LOGOUT_PENDING_KEY, pending ? '1' : null);
}

/** logoutPending reports whether a logout has not cleared the cookies yet. */
export function logoutPending(): boolean {
  return storageGet(() => window.localStorage, LOGOUT_PENDING_KEY) !== null;
}

/** subscribeTokens calls listener whenever this tab signs in or out, or its access token changes. */
export function subscribeTokens(listener: Listener): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}
