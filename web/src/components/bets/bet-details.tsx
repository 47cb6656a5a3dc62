import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Spinner } from '@/components/ui/spinner';
import { errorMessage } from '@/lib/api-client';
import { formatCount, formatMoney, formatMultiplier } from '@/lib/format';
import { formatBetTime, gameTitle, parseObject, prettyJson } from '@/lib/bets/bet-format';
import { useBet } from '@/lib/bets/get-bet';
import type { Bet } from '@/lib/bets/get-bets';
import { useVerifyBet } from '@/lib/bets/verify-bet';
import { browserCheckQueryOptions } from '@/lib/bets/verify-in-browser';
import styles from './bet-details.module.css';

function BrowserVerification({ bet }: { bet: Bet }) {
  const check = useQuery(browserCheckQueryOptions(bet));
  if (check.isPending) return <Spinner label="Verifying in your browser" />;
  if (check.isError) return <Alert>{errorMessage(check.error, 'Could not verify this bet in your browser')}</Alert>;
  const { verification, hashMatches, differences } = check.data;
  const ok = hashMatches && differences.length === 0;
  return (
    <div className={styles.check}>
      <p className={ok ? styles.ok : styles.bad} role="status">
        {ok
          ? '✓ Verified in your browser: the result matches the record'
          : `✗ Verification failed${hashMatches ? '' : ': the server seed does not match its hash'}${
              differences.length ? `: differs in ${differences.join(', ')}` : ''
            }`}
      </p>
      <dl className={styles.facts}>
        <div>
          <dt>Seed hash check</dt>
          <dd>{hashMatches ? 'SHA-256 of the server seed matches the hash shown before play' : 'Mismatch'}</dd>
        </div>
        {verification.lines.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd className={styles.mono}>{value}</dd>
          </div>
        ))}
      </dl>
    </div>
  );
}

function ServerVerification({ betId }: { betId: string }) {
  const server = useVerifyBet(betId, { enabled: true });
  if (server.isPending) return <Spinner label="Asking the server to verify" />;
  if (server.isError) return <Alert>{errorMessage(server.error, 'The server could not verify this bet')}</Alert>;
  const v = server.data;
  return (
    <div className={styles.check}>
      <p className={v.matches ? styles.ok : styles.bad}>
        {v.matches ? 'The server recomputes the same result' : 'The server reports a mismatch'}
      </p>
      <div className={styles.compare}>
        <div>
          <h4 className={styles.subTitle}>Recorded</h4>
          <pre className={styles.pre}>{prettyJson(v.recorded)}</pre>
        </div>
        <div>
          <h4 className={styles.subTitle}>Recomputed by the server</h4>
          <pre className={styles.pre}>{prettyJson(v.recomputed)}</pre>
        </div>
      </div>
    </div>
  );
}

export interface BetDetailsProps {
  betId: string;
  /** onBack, when given, adds a way back to the list (the Fairness panel); the My Bets page's dialog closes instead. */
  onBack?: () => void;
  /** revealAction, when given, replaces the advice to rotate under Seeds for a bet whose seed is still secret. */
  revealAction?: ReactNode;
}

/**
 * BetDetails shows one bet, its seeds and, once the seed is revealed, its verification
 * (in the browser and on the server, at once).
 */
export function BetDetails({ betId, onBack, revealAction }: BetDetailsProps) {
  const query = useBet(betId);
  const back = onBack ? (
    <Button variant="link" onClick={onBack}>
      ← Back to My Bets
    </Button>
  ) : null;
  if (query.isPending) return <Spinner label="Loading the bet" />;
  if (query.isError)
    return (
      <div className={styles.panel}>
        {back}
        <Alert>{errorMessage(query.error, 'Failed to load the bet')}</Alert>
      </div>
    );
  const { bet } = query.data;
  const revealed = bet.fairness.serverSeed !== '';
  const settled = bet.status !== 'active';
  const params = parseObject(bet.params);
  return (
    <div className={styles.panel}>
      {back}
      <h3 className={styles.subTitle}>{`${gameTitle(bet.game)} bet`}</h3>
      <dl className={styles.factsGrid}>
        <div>
          <dt>Bet</dt>
          <dd className={styles.mono}>{formatMoney(bet.amount)}</dd>
        </div>
        <div>
          <dt>Multiplier</dt>
          <dd className={styles.mono}>{formatMultiplier(bet.multiplier)}</dd>
        </div>
        <div>
          <dt>Payout</dt>
          <dd className={styles.mono}>{formatMoney(bet.payout)}</dd>
        </div>
        <div>
          <dt>Placed</dt>
          <dd>{formatBetTime(bet.createdAt)}</dd>
        </div>
        {Object.entries(params).map(([key, value]) => (
          <div key={key}>
            <dt>{key}</dt>
            <dd className={styles.mono}>{Array.isArray(value) ? value.join(', ') : String(value)}</dd>
          </div>
        ))}
      </dl>
      <dl className={styles.facts}>
        <div>
          <dt>Server seed hash</dt>
          <dd className={styles.mono}>{bet.fairness.serverSeedHash}</dd>
        </div>
        <div>
          <dt>Server seed</dt>
          <dd className={styles.mono}>
            {revealed ? bet.fairness.serverSeed : 'Secret until you rotate your seed pair'}
          </dd>
        </div>
        <div>
          <dt>Client seed</dt>
          <dd className={styles.mono}>{bet.fairness.clientSeed}</dd>
        </div>
        <div>
          <dt>Nonce</dt>
          <dd className={styles.mono}>{formatCount(bet.fairness.nonce)}</dd>
        </div>
      </dl>
      <section className={styles.verify} aria-label="Verification">
        <h3 className={styles.subTitle}>Verification</h3>
        {!settled ? (
          <p className={styles.muted}>This game is still running. Finish it to verify it.</p>
        ) : !revealed && revealAction ? (
          <>
            <p className={styles.muted}>
              The server seed of this bet is still secret. Rotating your seed pair reveals it and verifies the bet.
            </p>
            {revealAction}
          </>
        ) : !revealed ? (
          <p className={styles.muted}>
            The server seed of this bet is still secret. Rotate your seed pair under Seeds to reveal it, then come back
            to verify.
          </p>
        ) : (
          <>
            <BrowserVerification bet={bet} />
            <ServerVerification betId={bet._id} />
          </>
        )}
      </section>
    </div>
  );
}
