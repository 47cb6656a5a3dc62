import type { ReactNode } from 'react';
import styles from './game-controls.module.css';

/** Stat is a small labelled figure, such as a multiplier or a win chance. */
export function Stat({ label, children, tone }: { label: string; children: ReactNode; tone?: 'win' | 'loss' }) {
  return (
    <div className={styles.stat}>
      <span className={styles.statLabel}>{label}</span>
      <span className={`${styles.statValue} ${tone ? styles[tone] : ''}`}>{children}</span>
    </div>
  );
}
