import { useId, type ComponentProps, type ReactNode } from 'react';
import styles from './text-field.module.css';

export interface TextFieldProps extends ComponentProps<'input'> {
  label: string;
  hint?: ReactNode;
}

/** TextField is a labelled input; the hint, if any, describes it. */
export function TextField({ label, hint, id, className, ...props }: TextFieldProps) {
  const generated = useId();
  const inputId = id ?? generated;
  const hintId = `${inputId}-hint`;
  return (
    <div className={[styles.field, className].filter(Boolean).join(' ')}>
      <label className={styles.label} htmlFor={inputId}>
        {label}
      </label>
      <input id={inputId} className={styles.input} aria-describedby={hint ? hintId : undefined} {...props} />
      {hint ? (
        <p id={hintId} className={styles.hint}>
          {hint}
        </p>
      ) : null}
    </div>
  );
}
