import { useState } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Spinner } from '@/components/ui/spinner';
import { errorMessage } from '@/lib/api-client';
import { formatMoney, formatMultiplier } from '@/lib/format';
import { formatBetTime, gameTitle } from '@/lib/bets/bet-format';
import { useBets, type Bet } from '@/lib/bets/get-bets';
import styles from './fairness.module.css';

function BetRow({ bet, onOpen }: { bet: Bet; onOpen: (id: string) => void }) {
  const won = bet.payout > 0;
  return (
    <li>
      <button
        type="button"
        className={styles.betRow}
        onClick={() => {
          onOpen(bet._id);
        }}
      >
        <span className={styles.betGame}>{gameTitle(bet.game)}</span>
        <span className={styles.mono}>{formatMoney(bet.amount)}</span>
        <span className={styles.mono}>{bet.status === 'active' ? 'running' : formatMultiplier(bet.multiplier)}</span>
        <span className={`${styles.mono} ${won ? styles.win : ''}`}>{formatMoney(bet.payout)}</span>
        <span className={styles.betTime}>{formatBetTime(bet.createdAt)}</span>
      </button>
    </li>
  );
}

/** BetsPanel is My Bets: the player's bets, newest first, ten a page; each opens its details. */
export function BetsPanel({ onOpen }: { onOpen: (betId: string) => void }) {
  const [page, setPage] = useState(1);
  const bets = useBets(page);
  if (bets.isPending) return <Spinner label="Loading your bets" />;
  if (bets.isError) return <Alert>{errorMessage(bets.error, 'Failed to load your bets')}</Alert>;
  const { totalPages } = bets.data;
  if (bets.data.bets.length === 0) return <p className={styles.muted}>No bets yet. Place a bet to see it here.</p>;
  return (
    <div className={styles.panel}>
      <div className={styles.betHead} aria-hidden="true">
        <span>Game</span>
        <span>Bet</span>
        <span>Multiplier</span>
        <span>Payout</span>
        <span>Time</span>
      </div>
      <ul className={styles.betList} aria-label="My Bets">
        {bets.data.bets.map((bet) => (
          <BetRow key={bet._id} bet={bet} onOpen={onOpen} />
        ))}
      </ul>
      <div className={styles.pager}>
        <Button
          variant="secondary"
          size="sm"
          disabled={page <= 1}
          onClick={() => {
            setPage((p) => Math.max(1, p - 1));
          }}
        >
          Previous
        </Button>
        <span>{`Page ${String(page)} of ${String(Math.max(1, totalPages))}`}</span>
        <Button
          variant="secondary"
          size="sm"
          disabled={page >= totalPages}
          onClick={() => {
            setPage((p) => p + 1);
          }}
        >
          Next
        </Button>
      </div>
    </div>
  );
}
