import { formatPercentChange } from '@/lib/format';
import styles from './admin.module.css';

export interface StatCardProps {
  label: string;
  value: string;
  /** change is a percent change versus the previous period, shown with one decimal and its sign. */
  change?: { percent: number; period: 'month' | 'week' };
}

export function StatCard({ label, value, change }: StatCardProps) {
  const tone = !change ? '' : change.percent > 0 ? styles.up : change.percent < 0 ? styles.down : '';
  return (
    <div className={styles.statCard}>
      <p className={styles.statLabel}>{label}</p>
      <p className={styles.statValue}>{value}</p>
      {change ? (
        <p className={`${styles.statChange} ${tone}`}>
          {formatPercentChange(change.percent)} vs previous {change.period}
        </p>
      ) : null}
    </div>
  );
}
