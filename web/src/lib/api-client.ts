import type { RefreshRequestSchema, RefreshResponseSchema } from '@/gen/fairplay/v1/auth_pb';
import type { ApiJson } from './api-types';
import { withSessionLock } from './session-lock';
import {
  clearTokens,
  getAccessToken,
  getLegacyRefreshToken,
  getSessionUserId,
  hasSession,
  markLogoutPending,
  setAccessToken,
} from './tokens';

// The one way the app talks to /api: JSON in and out, the bearer token, the
// anti-forgery header, the session cookie and the refresh-and-retry-once rule
// of SPEC.md §4.

const BASE = '/api';
const CSRF_COOKIE = 'fairplay_csrf';
const CSRF_HEADER = 'X-CSRF-Token';
/** REFRESH_COOKIE_HEADER asks the server to keep the refresh token in its HttpOnly cookie, out of the body. */
const REFRESH_COOKIE_HEADER = 'X-Fairplay-Refresh-Cookie';

/**
 * SESSION_CALLS set, send or clear the session cookie (lib/tokens). They ask
 * for the refresh token in the cookie and run under the session lock. They
 * never trigger a refresh: they are the way to get or end a session, and a
 * refresh would wait for the lock they hold.
 */
const SESSION_CALLS = new Set(['/auth/login', '/auth/register', '/auth/refresh', '/auth/logout']);
/** SIGNS_IN are the session calls that open a new session. */
const SIGNS_IN = new Set(['/auth/login', '/auth/register']);

/** ApiError is a failed /api call: the HTTP status (0 when there was no response) and the server's message. */
export class ApiError extends Error {
  readonly status: number;
  /** serverMessage is the body's "message" when it was a string. */
  readonly serverMessage: string | undefined;

  constructor(status: number, serverMessage: string | undefined) {
    super(serverMessage ?? `Request failed with status ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.serverMessage = serverMessage;
  }
}

/** errorMessage is the server's message for err, else fallback (SPEC.md §8). */
export function errorMessage(err: unknown, fallback: string): string {
  return err instanceof ApiError && err.serverMessage ? err.serverMessage : fallback;
}

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface RequestOptions {
  method?: Method;
  body?: unknown;
  signal?: AbortSignal;
  /** keepalive lets the request outlive the page (a logout as the tab closes). */
  keepalive?: boolean;
  /**
   * onlyIf, checked once the call may be sent (for a session call, inside
   * the session lock), skips the call when it returns false: it resolves to
   * undefined.
   */
  onlyIf?: () => boolean;
}

/** CSRF_MIN is the shortest anti-forgery token the server accepts. */
const CSRF_MIN = 32;

/**
 * readCsrfCookie is the first anti-forgery cookie that can be the server's:
 * a browser may hold more than one (a sibling subdomain, or anyone on a
 * plain-http path, can plant one for the parent domain), and the server
 * accepts a header matching any of those it is sent; a short or undecodable
 * one is passed over rather than sent or thrown on.
 */
function readCsrfCookie(): string | null {
  for (const part of document.cookie.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key !== CSRF_COOKIE) continue;
    try {
      const value = decodeURIComponent(rest.join('='));
      if (value.length >= CSRF_MIN) return value;
    } catch {
      // Not URI-encoded text: not the server's.
    }
  }
  return null;
}

let csrfRequest: Promise<string> | null = null;

/** csrfToken returns the anti-forgery cookie's value, asking the server for one when it is missing. */
async function csrfToken(force = false): Promise<string> {
  const cookie = force ? null : readCsrfCookie();
  if (cookie) return cookie;
  if (!csrfRequest) {
    const request = fetchCsrfToken();
    csrfRequest = request;
    const done = () => {
      if (csrfRequest === request) csrfRequest = null;
    };
    request.then(done, done);
  }
  return csrfRequest;
}

async function fetchCsrfToken(): Promise<string> {
  let res: Response;
  try {
    res = await fetch(`${BASE}/csrf`, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
  } catch {
    throw new ApiError(0, undefined);
  }
  const body = await readBody(res);
  if (!res.ok) throw new ApiError(res.status, messageOf(body));
  // The body's token is a cookie the server was just sent (or has just set),
  // so it matches whatever other cookies the browser holds; the cookie is
  // the fallback.
  const fromBody = typeof body === 'object' && body !== null ? (body as { csrfToken?: unknown }).csrfToken : undefined;
  return typeof fromBody === 'string' && fromBody.length >= CSRF_MIN ? fromBody : (readCsrfCookie() ?? '');
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function messageOf(body: unknown): string | undefined {
  if (typeof body === 'object' && body !== null && 'message' in body) {
    const { message } = body;
    if (typeof message === 'string' && message) return message;
  }
  return undefined;
}

async function send(path: string, options: RequestOptions, token: string | null, forceCsrf = false): Promise<Response> {
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  if (SESSION_CALLS.has(path)) headers[REFRESH_COOKIE_HEADER] = '1';
  if (method !== 'GET') headers[CSRF_HEADER] = await csrfToken(forceCsrf);
  try {
    return await fetch(`${BASE}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: 'same-origin',
      signal: options.signal,
      keepalive: options.keepalive,
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new ApiError(0, undefined);
  }
}

/**
 * apiRequest performs one /api call and returns the parsed JSON body. A 401 is
 * retried once after a refresh shared by all concurrent callers (it fails with
 * the refresh's error when the refresh could not be done); a 403 for a stale
 * anti-forgery cookie is retried once with a fresh cookie. The calls of the
 * session cookie (SESSION_CALLS) run under the session lock.
 */
export function apiRequest<T>(path: string, options: RequestOptions = {}): Promise<T> {
  if (SESSION_CALLS.has(path)) return withSessionLock(() => request<T>(path, options), options.signal);
  return request<T>(path, options);
}

async function request<T>(path: string, options: RequestOptions): Promise<T> {
  // Decided inside the session lock: another tab may have changed the
  // session while this call waited for it.
  if (options.onlyIf && !options.onlyIf()) return undefined as T;
  let token = getAccessToken();
  // The player this request is sent as, read before it leaves: by the time
  // a 401 comes back another tab may have signed someone else in.
  const sentAs = getSessionUserId();
  let res = await send(path, options, token);

  if (res.status === 403 && (options.method ?? 'GET') !== 'GET') {
    const body = await readBody(res.clone());
    if (messageOf(body) === 'Invalid CSRF token') res = await send(path, options, token, true);
  }

  if (res.status === 401 && !SESSION_CALLS.has(path) && hasSession()) {
    // If another call already refreshed while this one was in flight, just use the new token.
    const current = getAccessToken();
    const fresh = current && current !== token ? current : (await refreshSession())?.token;
    // A refresh that brought another player's session (another tab signed
    // in as them) must not replay this player's request, a bet say, as theirs.
    const freshAs = getSessionUserId();
    if (fresh && (sentAs === null || freshAs === null || freshAs === sentAs)) {
      token = fresh;
      res = await send(path, options, token);
    }
  }

  const body = await readBody(res);
  if (!res.ok) throw new ApiError(res.status, messageOf(body));
  // A session just opened replaced the cookie a lost logout may have left:
  // that logout must not end this one (still inside the session lock).
  if (SIGNS_IN.has(path) && typeof body === 'object' && body !== null && 'token' in body && body.token) {
    markLogoutPending(false);
  }
  return body as T;
}

/** RefreshResponse: the server may leave out the user; the refresh token is in the cookie. */
export type RefreshResponse = ApiJson<typeof RefreshResponseSchema, 'user' | 'refreshToken'>;

/** RefreshRequest: empty (the cookie's token), or the legacy token to move into the cookie. */
type RefreshRequest = ApiJson<typeof RefreshRequestSchema, 'refreshToken'>;

let refreshing: Promise<RefreshResponse | null> | null = null;

/**
 * refreshSession exchanges the session cookie's refresh token for a new access
 * token (and the next refresh token, in the cookie: they rotate). Concurrent
 * callers in this tab share one request (single flight), which waits for the
 * session lock. It resolves to null when the server refused the refresh: the
 * session is over, and this tab is signed out. It rejects with the ApiError
 * when the session may still be good (no response, 429, 5xx).
 */
export function refreshSession(): Promise<RefreshResponse | null> {
  if (!refreshing) {
    const request = doRefresh();
    refreshing = request;
    const done = () => {
      if (refreshing === request) refreshing = null;
    };
    request.then(done, done);
  }
  return refreshing;
}

async function doRefresh(): Promise<RefreshResponse | null> {
  const legacy = getLegacyRefreshToken();
  const body: RefreshRequest = legacy ? { refreshToken: legacy } : {};
  try {
    const res = await apiRequest<RefreshResponse>('/auth/refresh', { method: 'POST', body });
    setAccessToken(res.token, res.user?._id);
    return res;
  } catch (err) {
    // Only a refusal ends the session. Without a response (offline), when the
    // server asks for a pause (429) or fails (5xx, a database failing over),
    // the session may still be good: keep it for the next try.
    if (err instanceof ApiError && (err.status === 0 || err.status === 429 || err.status >= 500)) throw err;
    clearTokens();
    return null;
  }
}
