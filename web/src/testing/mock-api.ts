import { vi } from 'vitest';

// A stand-in for the server's /api in component and client tests: handlers
// keyed by "METHOD /path" (path without the query string) answer fetch calls,
// and every call is recorded with its parsed body and headers.

export interface RecordedRequest {
  method: string;
  path: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

export type Handler = (req: RecordedRequest) => Response | Promise<Response>;

export function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

export function mockApi(handlers: Record<string, Handler>) {
  const requests: RecordedRequest[] = [];
  const routes = { ...handlers };
  const fetchMock = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = (init?.method ?? 'GET').toUpperCase();
    const path = new URL(url, 'http://localhost').pathname;
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, key) => {
      headers[key] = value;
    });
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
    const req: RecordedRequest = { method, path, url, headers, body };
    requests.push(req);
    const handler = routes[`${method} ${path}`];
    if (!handler) return json({ message: `no mock for ${method} ${path}` }, 404);
    return handler(req);
  });
  vi.stubGlobal('fetch', fetchMock);
  return {
    requests,
    /** calls lists the recorded requests to "METHOD /path". */
    calls: (key: string) => requests.filter((r) => `${r.method} ${r.path}` === key),
    /** on replaces or adds a handler. */
    on: (key: string, handler: Handler) => {
      routes[key] = handler;
    },
  };
}

/** deferred returns a promise with its resolve function, to hold a response until the test releases it. */
export function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export const DEV_TOKEN = 'XXXX.DUMMY.TOKEN.XXXX';

export const devConfig = () => json({ turnstileSiteKey: '', developmentBotCheck: true, developmentToken: DEV_TOKEN });

export function setCsrfCookie(value = 'csrf-token-value-that-is-long-enough-000') {
  document.cookie = `fairplay_csrf=${value}; path=/`;
}

/** setSignedInCookie sets the hint the server sets beside the HttpOnly session cookie (lib/tokens). */
export function setSignedInCookie() {
  document.cookie = 'fairplay_signed_in=1; path=/';
}

/** hasSignedInCookie reports whether the hint cookie is set. */
export function hasSignedInCookie(): boolean {
  return document.cookie.split('; ').includes('fairplay_signed_in=1');
}
