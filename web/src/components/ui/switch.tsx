import { useId, type ReactNode } from 'react';
import styles from './switch.module.css';

export interface SwitchProps {
  label: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  disabled?: boolean;
  /** description explains the setting under its label. */
  description?: ReactNode;
}

/** Switch is an on/off setting: a button with the switch role, named by its visible label. */
export function Switch({ label, checked, onChange, disabled, description }: SwitchProps) {
  const labelId = useId();
  const descriptionId = useId();
  return (
    <div className={styles.row}>
      <div className={styles.text}>
        <span id={labelId} className={styles.label}>
          {label}
        </span>
        {description ? (
          <span id={descriptionId} className={styles.description}>
            {description}
          </span>
        ) : null}
      </div>
      <button
        type="button"
        role="switch"
        aria-checked={checked}
        aria-labelledby={labelId}
        aria-describedby={description ? descriptionId : undefined}
        className={styles.switch}
        disabled={disabled}
        onClick={() => {
          onChange(!checked);
        }}
      >
        <span className={styles.thumb} aria-hidden="true" />
      </button>
    </div>
  );
}
