import { useId } from 'react';
import type { KenoRisk } from '@/config/keno-payouts';
import { payoutRows } from '../utils/keno';
import styles from './keno.module.css';

const HITS = Array.from({ length: 11 }, (_, i) => i);

export interface PayoutTableProps {
  risk: KenoRisk;
  /** picks highlights the row of the current selection. */
  picks: number;
  /** hits highlights the cell a finished round paid. */
  hits: number | null;
}

/** PayoutTable lists the multipliers of a risk level: a row per pick count, a column per number of hits. */
export function PayoutTable({ risk, picks, hits }: PayoutTableProps) {
  const captionId = useId();
  return (
    <div className={styles.tableWrap} role="region" aria-labelledby={captionId} tabIndex={0}>
      <table className={styles.table}>
        <caption id={captionId} className={styles.caption}>
          Payout Table
        </caption>
        <thead>
          <tr>
            <th scope="col">Picks</th>
            {HITS.map((h) => (
              <th key={h} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {payoutRows(risk).map((row) => (
            <tr key={row.picks} className={row.picks === picks ? styles.currentRow : undefined}>
              <th scope="row">{row.picks}</th>
              {row.cells.map((cell, h) => (
                <td key={h} className={row.picks === picks && h === hits ? styles.paidCell : undefined}>
                  {cell ?? ''}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
