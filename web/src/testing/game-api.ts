import { devConfig, json, mockApi, setCsrfCookie, type Handler } from './mock-api';
import { player, signIn } from './test-utils';

/** fairness is a bet's provably-fair data as the game endpoints return it. */
export const fairness = { serverSeedHash: 'ab'.repeat(32), serverSeed: '', clientSeed: 'client seed', nonce: 1 };

/**
 * gameApi stands in for the server of a game screen: the signed-in player (or a guest
 * with user: null), no running games, plus the handlers given.
 */
export function gameApi(extra: Record<string, Handler> = {}, { user = player }: { user?: typeof player | null } = {}) {
  setCsrfCookie();
  if (user) signIn();
  return mockApi({
    'GET /api/auth/config': devConfig,
    'GET /api/auth/user': () =>
      user ? json({ user }) : json({ message: 'No authentication token, access denied' }, 401),
    'GET /api/games/active': () => json({ mines: null, pump: null, blackjack: null }),
    ...extra,
  });
}
