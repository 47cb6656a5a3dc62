import styles from './layout.module.css';

export function Footer() {
  return (
    <footer className={styles.footer}>
      <p>
        © {new Date().getFullYear()} Fairplay. This is a demo project for educational purposes only. All balances are
        play money with no real-world value.
      </p>
    </footer>
  );
}
