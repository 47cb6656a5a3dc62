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
import { clearTokens, getRefreshToken, hasSession, setTokens, subscribeTokens } from './tokens';

// Authentication state (SPEC.md §4): the signed-in user is the ['auth', 'user']
// query (null when signed out); tokens live in lib/tokens, per tab.

/** User is the signed-in account as /api sends it; createdAt only in admin views. */
export type User = ApiJson<typeof UserSchema>;

export type LoginInput = ApiRequest<typeof LoginRequestSchema>;
export type RegisterInput = ApiRequest<typeof RegisterRequestSchema>;
type LoginResponse = ApiJson<typeof LoginResponseSchema>;
type RegisterResponse = ApiJson<typeof RegisterResponseSchema>;
type GetUserResponse = ApiJson<typeof GetUserResponseSchema>;

/** REFRESH_INTERVAL_MS: while signed in the access token is refreshed every 10 minutes. */
export const REFRESH_INTERVAL_MS = 10 * 60 * 1000;

export const userQueryKey = ['auth', 'user'] as const;

export async function getUser(): Promise<User | null> {
  if (!hasSession()) return null;
  try {
    const res = await apiRequest<GetUserResponse>('/auth/user');
    return res.user;
  } catch (err) {
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

/** The channel on which a tab that logs out tells this browser's other tabs to log out too. */
const LOGOUT_CHANNEL = 'fairplay.logout';

function logoutChannel(): BroadcastChannel | null {
  return typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel(LOGOUT_CHANNEL);
}

/**
 * logout ends the session on the server (best effort) and forgets the tokens.
 * Each tab has its own session (lib/tokens), so unless told otherwise it also
 * asks this browser's other tabs to end theirs: logging out logs the browser
 * out, as it did when the tabs shared one session.
 */
export async function logout({ everyTab = true }: { everyTab?: boolean } = {}): Promise<void> {
  try {
    if (getRefreshToken()) {
      await apiRequest('/auth/logout', {
        method: 'POST',
        refreshTokenBody: (refreshToken): ApiRequest<typeof LogoutRequestSchema> => ({ refreshToken }),
        signal: AbortSignal.timeout(5000),
      });
    }
  } catch (err) {
    console.error('logout', err);
  } finally {
    clearTokens();
    if (everyTab) {
      const channel = logoutChannel();
      channel?.postMessage('logout');
      channel?.close();
    }
  }
}

function useSignedIn() {
  const queryClient = useQueryClient();
  return (res: LoginResponse | RegisterResponse) => {
    // A login that asks for a two-factor code opened no session yet.
    if ('twoFactorRequired' in res && res.twoFactorRequired) return;
    queryClient.setQueryData(userQueryKey, res.user);
    setTokens(res);
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

/**
 * AuthProvider keeps the user query in step with the tokens: signing out
 * (here, by a failed refresh, or by logging out in another tab) drops the
 * user, every user-scoped query and the reveals seen (lib/reveals: the recent
 * results, live stats and "My bets" rows), and while signed in the access token is
 * refreshed every REFRESH_INTERVAL_MS.
 */
export function AuthProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const userId = useUser().data?._id;

  useEffect(
    () =>
      subscribeTokens(() => {
        if (!hasSession()) {
          queryClient.setQueryData(userQueryKey, null);
          queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== 'auth' });
          // And every request made, whose variables may hold a password or a code.
          queryClient.getMutationCache().clear();
          // The results seen this session were the player's: the next one starts with none.
          resetReveals();
        }
      }),
    [queryClient],
  );

  useEffect(() => {
    const channel = logoutChannel();
    if (!channel) return;
    channel.onmessage = () => {
      if (hasSession()) void logout({ everyTab: false });
    };
    return () => {
      channel.close();
    };
  }, []);

  useEffect(() => {
    if (!userId) return;
    const timer = window.setInterval(() => {
      void refreshSession().then((res) => {
        if (res?.user) queryClient.setQueryData(userQueryKey, res.user);
      });
    }, REFRESH_INTERVAL_MS);
    return () => {
      window.clearInterval(timer);
    };
  }, [userId, queryClient]);

  return children;
}
