import { useId, useState } from 'react';
import { Button } from '@/components/ui/button';
import type { GameSlug } from '@/config/games';
import { formatCount, formatMoney } from '@/lib/format';
import { resetSessionStats, useSessionStats } from '../utils/session-store';
import { ProfitChart } from './profit-chart';
import styles from './session-stats.module.css';

/**
 * SessionStats is a game's "Live stats": a button that opens a small panel with what was
 * wagered, the profit, the wins and losses since the page opened, and the profit's line.
 * The figures move at each reveal, never ahead of the game's animation.
 */
export function SessionStats({ game }: { game: GameSlug }) {
  const [open, setOpen] = useState(false);
  const panelId = useId();
  const stats = useSessionStats(game);
  return (
    <div className={styles.wrap}>
      <Button
        variant="secondary"
        size="sm"
        aria-expanded={open}
        aria-controls={panelId}
        onClick={() => {
          setOpen((o) => !o);
        }}
      >
        Live stats
      </Button>
      <section id={panelId} className={styles.panel} hidden={!open} aria-label="Live stats">
        <dl className={styles.figures}>
          <div>
            <dt>Wagered</dt>
            <dd>{formatMoney(stats.wagered)}</dd>
          </div>
          <div>
            <dt>Profit</dt>
            <dd className={stats.profit > 0 ? styles.up : stats.profit < 0 ? styles.down : undefined}>
              {formatMoney(stats.profit)}
            </dd>
          </div>
          <div>
            <dt>Wins</dt>
            <dd className={styles.up}>{formatCount(stats.wins)}</dd>
          </div>
          <div>
            <dt>Losses</dt>
            <dd className={styles.down}>{formatCount(stats.losses)}</dd>
          </div>
        </dl>
        <ProfitChart points={stats.points} />
        <Button
          variant="ghost"
          size="sm"
          onClick={() => {
            resetSessionStats(game);
          }}
        >
          Reset
        </Button>
      </section>
    </div>
  );
}
