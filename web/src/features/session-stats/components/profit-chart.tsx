import { formatMoney } from '@/lib/format';
import styles from './session-stats.module.css';

const W = 300;
const H = 90;
const PAD = 4;

/** chartPath maps running profits to an SVG polyline's points and the zero line's height. */
export function chartPath(points: readonly number[]): { line: string; zeroY: number } {
  const min = Math.min(0, ...points);
  const max = Math.max(0, ...points);
  const span = max - min;
  const step = points.length > 1 ? (W - 2 * PAD) / (points.length - 1) : 0;
  // A session that never left zero is a flat line across the middle.
  const y = (v: number) => (span === 0 ? H / 2 : PAD + ((max - v) / span) * (H - 2 * PAD));
  const line = points.map((v, i) => `${(PAD + i * step).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  return { line, zeroY: y(0) };
}

/** ProfitChart is the running profit as a small line chart (inline SVG), green above zero and red below. */
export function ProfitChart({ points }: { points: readonly number[] }) {
  const { line, zeroY } = chartPath(points);
  const last = points[points.length - 1] ?? 0;
  const bets = points.length - 1;
  return (
    <svg
      className={styles.chart}
      viewBox={`0 0 ${String(W)} ${String(H)}`}
      preserveAspectRatio="none"
      role="img"
      aria-label={
        bets === 0 ? 'Profit chart: no bets yet' : `Profit over ${String(bets)} bets, now ${formatMoney(last)}`
      }
    >
      <line x1={0} x2={W} y1={zeroY} y2={zeroY} className={styles.zero} />
      <polyline points={line} className={last < 0 ? styles.lossLine : styles.winLine} />
    </svg>
  );
}
