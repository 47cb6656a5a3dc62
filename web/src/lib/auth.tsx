import { queryOptions, useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { useEffect, type ReactNode } from 'react';
import type {
  GetUserResponseSchema,
  LoginRequestSchema,
  LoginResponseSchema,
  LogoutRequestSchema,
  RegisterRequestSchema,
  RegisterResponseSchema,
} from '@/gen/fairplay/v1/auth_pb';
import type { UserSchema } from '@/gen/fairplay/v1/user_pb';
import { ApiError, apiRequest, refreshSession } from './api-client';
import { resetReveals } from './reveals';
import type { ApiJson, ApiRequest } from './api-types';
import {
  clearTokens,
  dropAccessToken,
  getAccessToken,
  getSessionUserId,
  hasSession,
  hasSignedInCookie,
  logoutPending,
  markLogoutPending,
  setAccessToken,
  subscribeTokens,
} from './tokens';

// Authentication state (SPEC.md §4): the signed-in user is the ['auth', 'user']
// query (null when signed out); the tokens are kept by lib/tokens: the access
// token per tab, the refresh token in a cookie the browser's tabs share.

/** User is the signed-in account as /api sends it; createdAt only in admin views. */
export type User = ApiJson<typeof UserSchema>;

export type LoginInput = ApiRequest<typeof LoginRequestSchema>;
export type RegisterInput = ApiRequest<typeof RegisterRequestSchema>;
type LoginResponse = ApiJson<typeof LoginResponseSchema>;
type RegisterResponse = ApiJson<typeof RegisterResponseSchema>;
type GetUserResponse = ApiJson<typeof GetUserResponseSchema>;

/** REFRESH_INTERVAL_MS: while signed in the access token is refreshed every 10 minutes. */
export const REFRESH_INTERVAL_MS = 10 * 60 * 1000;

/**
 * SHARED_FRESH_MS: a tab whose access token is younger than this when its
 * turn to refresh comes skips the turn. The browser's tabs share one session,
 * and a tab that refreshes hands its new access token to the others
 * (TOKEN_CHANNEL), so the session is refreshed about once per interval
 * however many tabs are open, not once per tab: each refresh rotates the
 * session's token and counts towards its bound (accounts.MaxRefreshes). No
 * token should get older than the interval and this, the access token's
 * lifetime (15 minutes); one that does (a throttled background tab) earns a
 * 401, which a refresh-and-retry answers.
 */
const SHARED_FRESH_MS = REFRESH_INTERVAL_MS / 2;

export const userQueryKey = ['auth', 'user'] as const;

/**
 * getUser loads the signed-in user. A tab without an access token (a page
 * load, or a tab another one signed in) gets one by a refresh, whose answer
 * names the user too: asking /auth/user first would only earn a 401. A
 * refresh that could not be done fails the query and keeps the session.
 */
export async function getUser(): Promise<User | null> {
  if (logoutPending()) await finishLogout();
  if (!hasSession()) return null;
  const before = getSessionUserId();
  try {
    if (!getAccessToken()) {
      const refreshed = await refreshSession();
      if (!refreshed) return null; // refused: signed out
      if (refreshed.user) return refreshed.user;
    }
    const res = await apiRequest<GetUserResponse>('/auth/user');
    return res.user;
  } catch (err) {
    // A refresh brought another player's session (another tab signed in as
    // them): the request was not replayed as theirs, and they are the user now.
    if (err instanceof ApiError && err.status === 401 && getAccessToken() !== null && getSessionUserId() !== before) {
      return (await apiRequest<GetUserResponse>('/auth/user')).user;
    }
    // Still unauthorized after the refresh-and-retry: the session is over.
    if (err instanceof ApiError && err.status === 401) {
      clearTokens();
      return null;
    }
    throw err;
  }
}

export const userQueryOptions = () =>
  queryOptions({
    queryKey: userQueryKey,
    queryFn: getUser,
    staleTime: 5 * 60 * 1000,
  });

/** useUser is the signed-in user: data is null for guests and undefined while loading. */
export function useUser() {
  return useQuery(userQueryOptions());
}

/** setUserBalance shows a new balance (e.g. a game's newBalance) without refetching the user. */
export function setUserBalance(queryClient: QueryClient, balance: number): void {
  queryClient.setQueryData<User | null>(userQueryKey, (user) => (user ? { ...user, balance } : user));
}

export function loginWithPassword(input: LoginInput): Promise<LoginResponse> {
  return apiRequest<LoginResponse>('/auth/login', { method: 'POST', body: input });
}

export function registerWithEmail(input: RegisterInput): Promise<RegisterResponse> {
  return apiRequest<RegisterResponse>('/auth/register', { method: 'POST', body: input });
}

/** The channel on which a tab that logs out tells this browser's other tabs. */
const LOGOUT_CHANNEL = 'fairplay.logout';
/**
 * The channel on which a tab that signs in tells the others (a SignedIn).
 * Not the logout one: tabs of older versions log out on any message there.
 */
const LOGIN_CHANNEL = 'fairplay.login';

/** The channel on which a tab that refreshed hands its new access token to the others (a SharedToken). */
const TOKEN_CHANNEL = 'fairplay.token';

/** SharedToken: the tab tab refreshed the session of the player userId and got token. */
interface SharedToken {
  tab: string;
  userId: string;
  token: string;
}

/** SignedIn: the tab tab signed in to a session of the player userId. */
interface SignedIn {
  tab: string;
  userId: string;
}

/** TAB tells this tab's own messages from the other tabs' (it is no secret). */
const TAB = Math.random().toString(36).slice(2);

function openChannel(name: string): BroadcastChannel | null {
  return typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel(name);
}

/** broadcast tells this browser's tabs, this one's listeners included, message on channel name. */
function broadcast(name: string, message: unknown): void {
  const channel = openChannel(name);
  channel?.postMessage(message);
  channel?.close();
}

/**
 * sendLogout ends the session of the browser's cookie, which the server then
 * clears, whatever its answer. The request outlives the page (a tab closed
 * at once), and onlyIf is checked inside the session lock.
 */
function sendLogout(onlyIf?: () => boolean): Promise<unknown> {
  const body: ApiJson<typeof LogoutRequestSchema, 'refreshToken'> = {};
  return apiRequest('/auth/logout', {
    method: 'POST',
    body,
    signal: AbortSignal.timeout(5000),
    keepalive: true,
    onlyIf,
  });
}

/**
 * finishLogout sends again a logout that may not have reached the server
 * (lib/tokens), unless a sign-in has replaced the cookie since (it clears
 * the mark inside the session lock). Done once the browser holds no hint
 * cookie: the server's clearing removes it with the session cookie.
 */
async function finishLogout(): Promise<void> {
  try {
    await sendLogout(logoutPending);
  } catch (err) {
    console.error('logout', err);
  } finally {
    if (logoutPending()) markLogoutPending(hasSignedInCookie());
  }
}

/**
 * logout ends the session on the server, which clears the session cookie,
 * and forgets the access token. The browser's tabs share the session, so it
 * also tells the other tabs to forget theirs. The logout is marked pending
 * until the cookies are seen gone, whatever answered (a CDN's 429 does not
 * clear them): the next page load then sends it again. The tab signs out
 * all the same.
 */
export async function logout(): Promise<void> {
  markLogoutPending(true);
  try {
    if (hasSession()) await sendLogout();
  } catch (err) {
    console.error('logout', err);
  } finally {
    markLogoutPending(hasSignedInCookie());
    clearTokens();
    broadcast(LOGOUT_CHANNEL, 'logout');
  }
}

function useSignedIn() {
  const queryClient = useQueryClient();
  return (res: LoginResponse | RegisterResponse) => {
    // A login that asks for a two-factor code opened no session yet.
    if ('twoFactorRequired' in res && res.twoFactorRequired) return;
    queryClient.setQueryData(userQueryKey, res.user);
    setAccessToken(res.token, res.user._id);
    broadcast(LOGIN_CHANNEL, { tab: TAB, userId: res.user._id } satisfies SignedIn);
  };
}

export function useLogin() {
  const signedIn = useSignedIn();
  return useMutation({ mutationFn: loginWithPassword, onSuccess: signedIn });
}

export function useRegister() {
  const signedIn = useSignedIn();
  return useMutation({ mutationFn: registerWithEmail, onSuccess: signedIn });
}

export function useLogout() {
  return useMutation({ mutationFn: logout });
}

/** forgetPlayer drops what this tab holds of the player who was signed in. */
function forgetPlayer(queryClient: QueryClient): void {
  queryClient.setQueryData(userQueryKey, null);
  queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== 'auth' });
  // And every request made, whose variables may hold a password or a code.
  queryClient.getMutationCache().clear();
  // The results seen this session were the player's: the next one starts with none.
  resetReveals();
}

/**
 * followSignIn moves this tab to the session another tab signed in to, which
 * the browser's cookie now holds: the same player's tab only gets an access
 * token of that session; any other tab drops its player and loads the new one.
 */
function followSignIn(queryClient: QueryClient, userId: string): void {
  if (queryClient.getQueryData<User | null>(userQueryKey)?._id === userId) {
    refreshSession().catch(() => {
      // Not done: this tab's access token still works until the next refresh.
    });
    return;
  }
  if (getAccessToken()) {
    dropAccessToken();
    forgetPlayer(queryClient);
  }
  void queryClient.invalidateQueries({ queryKey: userQueryKey });
}

/**
 * AuthProvider keeps the user query in step with the session: signing out
 * (here, by a refused refresh, or by logging out in another tab) drops the
 * user, every user-scoped query and the reveals seen (lib/reveals: the recent
 * results, live stats and "My bets" rows); a sign-in in another tab signs
 * this one in to the same session (the browser's tabs share its cookie); and
 * while signed in the access token is refreshed every REFRESH_INTERVAL_MS.
 */
export function AuthProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const userId = useUser().data?._id;

  useEffect(
    () =>
      subscribeTokens(() => {
        // Signed out (here, or in another tab): whatever a hint cookie says.
        if (getAccessToken() === null) {
          forgetPlayer(queryClient);
          return;
        }
        // A refresh brought another player's session (another tab signed in
        // as them): this tab's player and everything of theirs goes.
        const shown = queryClient.getQueryData<User | null>(userQueryKey);
        const sessionUser = getSessionUserId();
        if (shown && sessionUser !== null && shown._id !== sessionUser) {
          forgetPlayer(queryClient);
          void queryClient.invalidateQueries({ queryKey: userQueryKey });
        }
      }),
    [queryClient],
  );

  useEffect(() => {
    const loggedOut = openChannel(LOGOUT_CHANNEL);
    const signedIn = openChannel(LOGIN_CHANNEL);
    if (loggedOut) {
      // The other tab ended the session and its cookies.
      loggedOut.onmessage = dropAccessToken;
    }
    if (signedIn) {
      signedIn.onmessage = ({ data }: MessageEvent<SignedIn>) => {
        if (data.tab !== TAB) followSignIn(queryClient, data.userId);
      };
    }
    return () => {
      loggedOut?.close();
      signedIn?.close();
    };
  }, [queryClient]);

  useEffect(() => {
    if (!userId) return;
    // When this tab's access token last changed: at sign-in, by a refresh
    // of its own, or by one another tab shared.
    let freshAt = Date.now();
    const unsubscribe = subscribeTokens(() => {
      freshAt = Date.now();
    });
    const shared = openChannel(TOKEN_CHANNEL);
    if (shared) {
      shared.onmessage = ({ data }: MessageEvent<SharedToken>) => {
        if (data.tab !== TAB && data.userId === userId && getAccessToken() !== null) {
          setAccessToken(data.token, data.userId);
        }
      };
    }
    const timer = window.setInterval(() => {
      if (Date.now() - freshAt < SHARED_FRESH_MS) return;
      refreshSession().then(
        (res) => {
          if (!res) return; // refused: signed out
          if (res.user) queryClient.setQueryData(userQueryKey, res.user);
          // Named by the answer's player: the session may have become another's.
          if (res.user)
            broadcast(TOKEN_CHANNEL, { tab: TAB, userId: res.user._id, token: res.token } satisfies SharedToken);
        },
        () => {
          // Not done (offline, or the server busy): the session is kept for the next try.
        },
      );
    }, REFRESH_INTERVAL_MS);
    return () => {
      window.clearInterval(timer);
      unsubscribe();
      shared?.close();
    };
  }, [userId, queryClient]);

  return children;
}
