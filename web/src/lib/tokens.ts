// The session's tokens (SPEC.md §3: "stored in the browser") live in this
// module's memory, per tab. Everything else reads them through this module,
// which also tells subscribers when they change (sign-in, refresh, sign-out).
//
// They are kept out of localStorage: a refresh token there is on disk for 30
// days and handed to every tab and every page load of the origin, and tabs
// sharing one rotating refresh token would race each other's refreshes,
// which the server takes for a stolen token (README, "Token storage"). So
// each tab signs in on its own, and a tab keeps its tokens across a reload
// by parking them in sessionStorage (which is per tab and dies with it) only
// while the page is hidden or being unloaded: on pagehide or when the tab
// goes to the background, and they are taken out again as soon as the page
// is shown. A tab the browser duplicates, or opens from this one, while the
// page is on screen therefore starts signed out instead of sharing this
// tab's refresh token. Tokens an older version left in localStorage are
// taken over once and removed from there.

const ACCESS_KEY = 'fairplay.token';
const REFRESH_KEY = 'fairplay.refreshToken';

type Listener = () => void;
const listeners = new Set<Listener>();

let access: string | null = null;
let refresh: string | null = null;
/** parked: whether sessionStorage holds the tokens now (the page is hidden or unloading). */
let parked = false;

function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null; // storage disabled: the session lasts until the tab reloads
  }
}

function write(key: string, value: string | null): void {
  try {
    if (value === null) storage()?.removeItem(key);
    else storage()?.setItem(key, value);
  } catch {
    // A full or disabled storage: the session then lasts until the tab reloads.
  }
}

/** park puts the tokens in sessionStorage, for a reload or a return to this tab. */
function park(): void {
  parked = true;
  write(ACCESS_KEY, access);
  write(REFRESH_KEY, refresh);
}

/** unpark takes them out again: while the page is shown they live in memory only. */
function unpark(): void {
  parked = false;
  write(ACCESS_KEY, null);
  write(REFRESH_KEY, null);
}

/**
 * takeLegacy removes the tokens an older version of the app kept in
 * localStorage, so that no refresh token stays on disk, and returns them.
 */
function takeLegacy(): [string | null, string | null] {
  try {
    const legacy = window.localStorage;
    const pair: [string | null, string | null] = [legacy.getItem(ACCESS_KEY), legacy.getItem(REFRESH_KEY)];
    legacy.removeItem(ACCESS_KEY);
    legacy.removeItem(REFRESH_KEY);
    return pair;
  } catch {
    return [null, null];
  }
}

/**
 * load takes the tokens a reload of this tab left (or, the first time, those
 * an older version left in localStorage), and listens for the page being
 * hidden or shown.
 */
function load(): void {
  if (typeof window === 'undefined') return;
  try {
    access = storage()?.getItem(ACCESS_KEY) ?? null;
    refresh = storage()?.getItem(REFRESH_KEY) ?? null;
  } catch {
    access = refresh = null;
  }
  const [legacyAccess, legacyRefresh] = takeLegacy();
  if (refresh === null && legacyRefresh !== null) {
    access = legacyAccess;
    refresh = legacyRefresh;
  }
  if (document.visibilityState === 'hidden') park();
  else unpark();
  window.addEventListener('pagehide', park);
  window.addEventListener('pageshow', () => {
    if (document.visibilityState !== 'hidden') unpark();
  });
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') park();
    else unpark();
  });
}

load();

function set(nextAccess: string | null, nextRefresh: string | null): void {
  const changed = nextAccess !== access || nextRefresh !== refresh;
  access = nextAccess;
  refresh = nextRefresh;
  if (parked) park();
  if (changed) for (const listener of listeners) listener();
}

export function getAccessToken(): string | null {
  return access;
}

export function getRefreshToken(): string | null {
  return refresh;
}

export function hasSession(): boolean {
  return access !== null || refresh !== null;
}

/** setTokens stores a new pair: after sign-in, and after each refresh (refresh tokens rotate). */
export function setTokens(tokens: { token: string; refreshToken: string }): void {
  set(tokens.token, tokens.refreshToken);
}

export function clearTokens(): void {
  set(null, null);
}

/** subscribeTokens calls listener whenever this tab's tokens change. */
export function subscribeTokens(listener: Listener): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}
