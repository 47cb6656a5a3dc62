import { useEffect, useImperativeHandle, useMemo, useRef, type Ref } from 'react';
import { plinkoMultipliers, type PlinkoRisk } from '@/config/plinko-multipliers';
import { bucketColor } from '../utils/colors';
import { formatBucket, pathDuration, pointAt, type PathPoint } from '../utils/path';
import styles from './plinko.module.css';

// Board geometry in SVG units: pin spacing, row spacing, margin above the first row.
const SPACING = 40;
const ROW_GAP = 36;
const TOP = 34;
const PIN_R = 4;
const BALL_R = 10;
const SVG_NS = 'http://www.w3.org/2000/svg';

export interface PlinkoBoardHandle {
  /**
   * launch animates a ball along path (150 ms per point, divided by speed: autobet drops faster) and calls onLand
   * when it reaches its bucket.
   */
  launch: (path: PathPoint[], onLand: () => void, speed?: number) => void;
  /** clear removes every ball in flight without landing it. */
  clear: () => void;
}

export interface PlinkoBoardProps {
  rows: number;
  risk: PlinkoRisk;
  /** landed highlights the bucket the latest ball fell into (seq restarts the highlight). */
  landed: { bucket: number; seq: number } | null;
  ref?: Ref<PlinkoBoardHandle>;
}

interface Ball {
  el: SVGCircleElement;
  points: PathPoint[];
  start: number;
  duration: number;
  /** speed scales the animation: 1 is 150 ms per point. */
  speed: number;
  onLand: () => void;
}

/**
 * PlinkoBoard draws the pins and the payout buckets, and animates any number of balls at
 * once. Balls are SVG circles moved by one requestAnimationFrame loop that writes their
 * transform directly, so a frame costs no React render and no layout.
 */
export function PlinkoBoard({ rows, risk, landed, ref }: PlinkoBoardProps) {
  const layer = useRef<SVGGElement>(null);
  const balls = useRef(new Set<Ball>());
  const frame = useRef(0);
  const width = (rows + 2) * SPACING;
  const height = TOP + rows * ROW_GAP;
  const geometry = useRef({ width, rows });
  useEffect(() => {
    geometry.current = { width, rows };
  });

  const pins = useMemo(() => {
    const out: { x: number; y: number }[] = [];
    for (let r = 0; r < rows; r++) {
      for (let j = 0; j < r + 3; j++) out.push({ x: width / 2 + (j - (r + 2) / 2) * SPACING, y: TOP + r * ROW_GAP });
    }
    return out;
  }, [rows, width]);

  useImperativeHandle(ref, () => {
    const place = (ball: Ball, p: PathPoint) => {
      const x = geometry.current.width / 2 + p.x * SPACING;
      const y = TOP + p.y * ROW_GAP - PIN_R - BALL_R;
      ball.el.setAttribute('transform', `translate(${x.toFixed(2)} ${y.toFixed(2)})`);
    };
    const tick = (now: number) => {
      for (const ball of balls.current) {
        const elapsed = now - ball.start;
        if (elapsed >= ball.duration) {
          ball.el.remove();
          balls.current.delete(ball);
          ball.onLand();
        } else {
          place(ball, pointAt(ball.points, elapsed * ball.speed));
        }
      }
      frame.current = balls.current.size > 0 ? requestAnimationFrame(tick) : 0;
    };
    return {
      launch(path, onLand, speed = 1) {
        const el = document.createElementNS(SVG_NS, 'circle');
        el.setAttribute('r', String(BALL_R));
        el.setAttribute('class', styles.ball ?? '');
        const ball: Ball = {
          el,
          points: path,
          start: performance.now(),
          duration: pathDuration(path) / speed,
          speed,
          onLand,
        };
        place(ball, path[0] ?? { x: 0, y: -1 });
        layer.current?.appendChild(el);
        balls.current.add(ball);
        if (!frame.current) frame.current = requestAnimationFrame(tick);
      },
      clear() {
        for (const ball of balls.current) ball.el.remove();
        balls.current.clear();
      },
    };
  }, []);

  useEffect(() => {
    const inFlight = balls.current;
    return () => {
      cancelAnimationFrame(frame.current);
      frame.current = 0;
      inFlight.clear();
    };
  }, []);

  const multipliers = plinkoMultipliers(risk, rows);
  return (
    <div className={styles.board} data-testid="game-board">
      <svg
        className={styles.svg}
        viewBox={`0 ${-BALL_R * 2 - PIN_R} ${width} ${height + BALL_R * 2 + PIN_R}`}
        aria-hidden="true"
      >
        <g className={styles.pins}>
          {pins.map((pin) => (
            <circle key={`${pin.x}-${pin.y}`} cx={pin.x} cy={pin.y} r={PIN_R} />
          ))}
        </g>
        <g ref={layer} />
      </svg>
      <ol
        // Past 10 rows a phone's buckets are too narrow for a label across: it is set upright.
        className={`${styles.buckets} ${rows > 10 ? styles.dense : ''}`}
        aria-label="Payouts"
        style={{
          gridTemplateColumns: `repeat(${rows + 1}, minmax(0, 1fr))`,
          paddingInline: `${50 / (rows + 2)}%`,
        }}
      >
        {multipliers.map((m, k) => {
          const hit = landed?.bucket === k;
          return (
            <li
              key={hit ? `${k}-${landed.seq}` : k}
              className={`${styles.bucket} ${hit ? styles.landed : ''}`}
              style={{ background: bucketColor(k, rows) }}
              aria-label={`${m}x`}
              aria-current={hit ? 'true' : undefined}
            >
              <span className={styles.bucketLabel}>{formatBucket(m)}</span>
            </li>
          );
        })}
      </ol>
    </div>
  );
}
