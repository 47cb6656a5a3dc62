import { queryOptions } from '@tanstack/react-query';
import type { Bet } from './get-bets';
import { parseObject } from './bet-format';
import { mismatches, recompute, sha256Hex, type Verification } from './provably-fair';

export interface BrowserCheck {
  verification: Verification;
  /** hashMatches: the revealed server seed hashes to the commitment shown before play. */
  hashMatches: boolean;
  /** differences lists the outcome fields where the browser disagrees with the recorded result. */
  differences: string[];
}

/** verifyInBrowser recomputes a settled bet with WebCrypto and compares it with the server's record. */
export async function verifyInBrowser(bet: Bet): Promise<BrowserCheck> {
  const { serverSeed, serverSeedHash, clientSeed, nonce } = bet.fairness;
  const verification = await recompute(bet.game, { serverSeed, clientSeed, nonce }, parseObject(bet.params));
  const hashMatches = (await sha256Hex(serverSeed)) === serverSeedHash.toLowerCase();
  return { verification, hashMatches, differences: mismatches(verification.outcome, parseObject(bet.outcome)) };
}

/** The check is pure, so its answer is kept for as long as the panel lives. */
export const browserCheckQueryOptions = (bet: Bet) =>
  queryOptions({
    queryKey: ['bets', 'browser-check', bet._id, bet.fairness.serverSeed],
    queryFn: () => verifyInBrowser(bet),
    staleTime: Infinity,
    retry: false,
  });
