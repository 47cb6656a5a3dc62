import styles from './spinner.module.css';

export function Spinner({ label = 'Loading' }: { label?: string }) {
  return (
    <span role="status" className={styles.wrap}>
      <span className={styles.spinner} aria-hidden="true" />
      <span className="sr-only">{label}</span>
    </span>
  );
}

/** PageSpinner centres a spinner in the page body while a route or its data loads. */
export function PageSpinner() {
  return (
    <div className={styles.page}>
      <Spinner />
    </div>
  );
}
