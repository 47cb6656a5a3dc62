import { useEffect, useState } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { errorMessage } from '@/lib/api-client';
import { useUser } from '@/lib/auth';
import { formatMoney } from '@/lib/format';
import { useClaimTopUp } from '../api/claim-top-up';
import { useTopUp } from '../api/get-top-up';
import styles from './top-up-offer.module.css';

const timeFormat = new Intl.DateTimeFormat('en-US', { weekday: 'short', hour: 'numeric', minute: '2-digit' });

/** untilText says how long until iso, to the minute: "in 5 h 12 min", "in 3 min", "in less than a minute". */
export function untilText(iso: string, now: number): string {
  const ms = new Date(iso).getTime() - now;
  if (!Number.isFinite(ms)) return 'later';
  const minutes = Math.ceil(ms / 60_000);
  if (minutes <= 1) return 'in less than a minute';
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return h > 0 ? `in ${String(h)} h ${String(m)} min` : `in ${String(m)} min`;
}

/**
 * TopUpOffer appears when the signed-in player's balance is below the smallest bet: a
 * button to claim the daily play-money top-up, or, when it was claimed less than a day
 * ago, when the next one comes. The balance it reads is the header's, which moves at
 * each reveal, so the offer never announces a loss before the game shows it.
 */
export function TopUpOffer() {
  const user = useUser().data;
  const topUp = useTopUp({ enabled: Boolean(user) });
  const claim = useClaimTopUp();
  const [now, setNow] = useState(() => Date.now());
  const low = Boolean(user && topUp.data && user.balance < topUp.data.threshold);
  const { refetch } = topUp;

  // What the server said while the balance was high may not hold now that it is low.
  useEffect(() => {
    if (low) void refetch();
  }, [low, refetch]);

  const nextAt = topUp.data?.available ? undefined : topUp.data?.nextAt;
  useEffect(() => {
    if (!low || !nextAt) return;
    const timer = window.setInterval(() => {
      setNow(Date.now());
    }, 30_000);
    const wait = new Date(nextAt).getTime() - Date.now();
    // When the wait is over, ask again: the offer turns into a button.
    const ready = wait > 0 && wait < 2 ** 31 - 1 ? window.setTimeout(() => void refetch(), wait + 1000) : undefined;
    return () => {
      window.clearInterval(timer);
      window.clearTimeout(ready);
    };
  }, [low, nextAt, refetch]);

  // An amount of 0 means the casino turned top-ups off: there is nothing to offer.
  if (!user || !topUp.data || !low || topUp.data.amount <= 0) return null;
  const { available, amount } = topUp.data;
  return (
    <section className={styles.offer} aria-label="Daily top-up">
      {available ? (
        <>
          <p>
            <strong>Out of play money?</strong> {`Claim your daily top-up of ${formatMoney(amount)} and keep playing.`}
          </p>
          <Button
            size="sm"
            disabled={claim.isPending}
            onClick={() => {
              claim.mutate();
            }}
          >
            {claim.isPending ? 'Claiming…' : `Claim ${formatMoney(amount)}`}
          </Button>
        </>
      ) : nextAt ? (
        <p>
          {`Your balance is below the smallest bet. Your next daily top-up of ${formatMoney(amount)} is available `}
          <time dateTime={nextAt}>{`${untilText(nextAt, now)} (${timeFormat.format(new Date(nextAt))})`}</time>.
        </p>
      ) : (
        // Neither available nor waiting for the next day: a running game's stake still counts (the server's order of checks).
        <p>Your balance is below the smallest bet. Finish your running game to claim the daily top-up.</p>
      )}
      {claim.isError ? (
        <Alert>{errorMessage(claim.error, 'Could not claim the top-up. Please try again.')}</Alert>
      ) : null}
    </section>
  );
}
