import { formatCount, formatMoney } from '@/lib/format';
import type { ActivityStats } from '../api/types';
import styles from './admin.module.css';

function formatRtp(percent: number): string {
  return Number.isFinite(percent) ? `${percent.toFixed(2)}%` : '—';
}

/** ActivityTable shows each game's bets, money and return to player over the last 24 hours. */
export function ActivityTable({ stats }: { stats: ActivityStats }) {
  return (
    <div className={styles.activity}>
      <p>
        Active players (last 15 minutes): <strong>{formatCount(stats.activePlayers)}</strong>
      </p>
      {stats.games.length === 0 ? (
        <p className={styles.muted}>No bets in the last 24 hours.</p>
      ) : (
        <div className={styles.tableWrap}>
          <table className={styles.table}>
            <caption className="sr-only">Activity per game over the last 24 hours</caption>
            <thead>
              <tr>
                <th scope="col">Game</th>
                <th scope="col" className={styles.num}>
                  Bets
                </th>
                <th scope="col" className={styles.num}>
                  Wagered
                </th>
                <th scope="col" className={styles.num}>
                  Paid Out
                </th>
                <th scope="col" className={styles.num}>
                  RTP
                </th>
                <th scope="col" className={styles.num}>
                  Theoretical RTP
                </th>
              </tr>
            </thead>
            <tbody>
              {stats.games.map((g) => (
                <tr key={g.game}>
                  <th scope="row" className={styles.gameName}>
                    {g.game}
                  </th>
                  <td className={styles.num}>{formatCount(g.bets)}</td>
                  <td className={styles.num}>{formatMoney(g.wagered)}</td>
                  <td className={styles.num}>{formatMoney(g.paidOut)}</td>
                  <td className={styles.num}>{g.bets > 0 ? formatRtp(g.rtp) : '—'}</td>
                  <td className={styles.num}>{formatRtp(g.theoreticalRtp)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
