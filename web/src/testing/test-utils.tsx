import { QueryClient } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { ReactElement } from 'react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { AppProvider } from '@/app/provider';
import { routes } from '@/app/router';
import type { User } from '@/lib/auth';
import { setAccessToken } from '@/lib/tokens';
import { setSignedInCookie } from './mock-api';

export function testQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: { queries: { retry: false, gcTime: Infinity }, mutations: { retry: false } },
  });
}

/** renderApp renders the whole app (providers, layout, routes) at path. */
export function renderApp(path = '/') {
  const router = createMemoryRouter(routes, { initialEntries: [path] });
  const user = userEvent.setup();
  const queryClient = testQueryClient();
  const result = render(
    <AppProvider queryClient={queryClient}>
      <RouterProvider router={router} />
    </AppProvider>,
  );
  return { ...result, router, user, queryClient };
}

/** renderWithProviders renders ui inside the app's providers and a memory router. */
export function renderWithProviders(ui: ReactElement, { path = '/' }: { path?: string } = {}) {
  const router = createMemoryRouter([{ path: '*', element: ui }], { initialEntries: [path] });
  const user = userEvent.setup();
  const result = render(
    <AppProvider queryClient={testQueryClient()}>
      <RouterProvider router={router} />
    </AppProvider>,
  );
  return { ...result, router, user };
}

export const player: User = {
  _id: '7d1c2a9e-0000-4000-8000-000000000001',
  username: 'alice',
  email: 'alice@example.com',
  balance: 1234.5,
  isAdmin: false,
  hideUsername: false,
  twoFactorEnabled: false,
};

export const admin: User = { ...player, _id: '7d1c2a9e-0000-4000-8000-000000000002', username: 'root', isAdmin: true };

/**
 * signIn makes this tab signed in as after a sign-in of user (the player by
 * default): the access token in memory, and the hint cookie the server sets
 * beside the session cookie.
 */
export function signIn(user: User = player) {
  setSignedInCookie();
  setAccessToken('access-token', user._id);
}
