// The session's tokens live in localStorage (SPEC.md §3) so a reload keeps the
// player signed in. Everything else reads them through this module, which also
// tells subscribers when they change (sign-in, refresh, sign-out, other tabs).

const ACCESS_KEY = 'fairplay.token';
const REFRESH_KEY = 'fairplay.refreshToken';

/** Where a change came from: this tab, or another tab through the storage event. */
export type TokenChangeSource = 'local' | 'storage';
type Listener = (source: TokenChangeSource) => void;
const listeners = new Set<Listener>();

function read(key: string): string | null {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null;
  }
}

function write(key: string, value: string | null): void {
  try {
    if (value === null) window.localStorage.removeItem(key);
    else window.localStorage.setItem(key, value);
  } catch {
    // Storage can be unavailable (private mode quotas); the session then lasts until reload.
  }
}

function emit(): void {
  for (const listener of listeners) listener('local');
}

export function getAccessToken(): string | null {
  return read(ACCESS_KEY);
}

export function getRefreshToken(): string | null {
  return read(REFRESH_KEY);
}

export function hasSession(): boolean {
  return getAccessToken() !== null || getRefreshToken() !== null;
}

export function setTokens(tokens: { token: string; refreshToken: string }): void {
  write(ACCESS_KEY, tokens.token);
  write(REFRESH_KEY, tokens.refreshToken);
  emit();
}

export function setAccessToken(token: string): void {
  write(ACCESS_KEY, token);
  emit();
}

export function clearTokens(): void {
  const had = hasSession();
  write(ACCESS_KEY, null);
  write(REFRESH_KEY, null);
  if (had) emit();
}

/** subscribeTokens calls listener whenever the tokens change, in this tab or another. */
export function subscribeTokens(listener: Listener): () => void {
  listeners.add(listener);
  const onStorage = (event: StorageEvent) => {
    if (event.key === null || event.key === ACCESS_KEY || event.key === REFRESH_KEY) listener('storage');
  };
  window.addEventListener('storage', onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('storage', onStorage);
  };
}
