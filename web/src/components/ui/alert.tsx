import type { ReactNode } from 'react';
import styles from './alert.module.css';

/** Alert shows a message that screen readers announce at once (role="alert"). */
export function Alert({ children, variant = 'error' }: { children: ReactNode; variant?: 'error' | 'success' }) {
  return (
    <p role="alert" className={`${styles.alert} ${styles[variant]}`}>
      {children}
    </p>
  );
}
