import type { GameSlug } from '@/config/games';
import { useUser } from '@/lib/auth';
import { RECENT_COUNT, useRecentBets } from '@/lib/bets/get-bets';
import { isWin, recentOutcomes } from '@/lib/bets/recent';
import { formatMultiplier } from '@/lib/format';
import { isHeld, useReveals } from '@/lib/reveals';
import styles from './recent-results.module.css';

/**
 * RecentResults is the strip of the player's last ten outcomes of a game, newest first
 * (green for a win, grey otherwise). It starts from the history read when the screen
 * opens and then grows only from reveals, so a result shows when the game shows it,
 * never when its response arrives. Guests have no results, and see no strip.
 */
export function RecentResults({ game }: { game: GameSlug }) {
  const user = useUser().data;
  const reveals = useReveals();
  const history = useRecentBets(game, { enabled: Boolean(user) });
  if (!user) return null;
  const outcomes = recentOutcomes(reveals, history.data?.bets ?? [], { limit: RECENT_COUNT, game, held: isHeld });
  return (
    <ol className={styles.strip} aria-label="Recent results">
      {outcomes.length === 0 ? (
        <li className={styles.empty}>{history.isPending ? 'Loading results…' : 'Your results will show here'}</li>
      ) : (
        outcomes.map((o) => {
          const win = isWin(o);
          return (
            <li key={o.betId} className={`${styles.pill} ${win ? styles.win : styles.loss}`}>
              {formatMultiplier(o.multiplier)}
              <span className={styles.srOnly}>{win ? ' win' : ' loss'}</span>
            </li>
          );
        })
      )}
    </ol>
  );
}
