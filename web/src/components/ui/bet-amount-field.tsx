import { useId } from 'react';
import { BET_MIN, BET_STEP, doubleBet, formatBetInput, halveBet, parseBetAmount } from '@/lib/bet';
import styles from './game-controls.module.css';

export interface BetAmountFieldProps {
  /** value is the input's text; parseBetAmount reads it (invalid text is 0). */
  value: string;
  onChange: (value: string) => void;
  disabled?: boolean;
  label?: string;
}

/** BetAmountField is every game's bet input (min 0.1, step 0.1) with its half and double buttons. */
export function BetAmountField({ value, onChange, disabled, label = 'Bet Amount' }: BetAmountFieldProps) {
  const id = useId();
  const amount = parseBetAmount(value);
  return (
    <div className={styles.field}>
      <label className={styles.label} htmlFor={id}>
        {label}
      </label>
      <div className={styles.betRow}>
        <span className={styles.betInputWrap}>
          <span className={styles.currency} aria-hidden="true">
            $
          </span>
          <input
            id={id}
            className={styles.betInput}
            type="number"
            inputMode="decimal"
            min={BET_MIN}
            step={BET_STEP}
            value={value}
            disabled={disabled}
            onChange={(event) => {
              onChange(event.target.value);
            }}
          />
        </span>
        <button
          type="button"
          className={styles.betButton}
          // The name is the visible text (WCAG 2.5.3 Label in Name); the title describes it.
          title="Half bet"
          disabled={disabled}
          onClick={() => {
            onChange(formatBetInput(halveBet(amount)));
          }}
        >
          ½
        </button>
        <button
          type="button"
          className={styles.betButton}
          title="Double bet"
          disabled={disabled}
          onClick={() => {
            onChange(formatBetInput(doubleBet(amount)));
          }}
        >
          2×
        </button>
      </div>
    </div>
  );
}
