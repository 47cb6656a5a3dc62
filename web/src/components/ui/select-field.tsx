import { useId } from 'react';
import type { ToggleOption } from './toggle-group';
import styles from './game-controls.module.css';

export interface SelectFieldProps<T extends string> {
  label: string;
  options: readonly ToggleOption<T>[];
  value: T;
  onChange: (value: T) => void;
  disabled?: boolean;
}

/** SelectField is a labelled native select: keyboard- and touch-friendly at any width. */
export function SelectField<T extends string>({ label, options, value, onChange, disabled }: SelectFieldProps<T>) {
  const id = useId();
  return (
    <div className={styles.field}>
      <label className={styles.label} htmlFor={id}>
        {label}
      </label>
      <select
        id={id}
        className={styles.select}
        value={value}
        disabled={disabled}
        onChange={(event) => {
          const next = options.find((option) => option.value === event.target.value);
          if (next) onChange(next.value);
        }}
      >
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  );
}
