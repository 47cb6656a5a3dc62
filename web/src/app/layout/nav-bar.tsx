import { NavLink } from 'react-router';
import styles from './layout.module.css';

export function NavBar() {
  return (
    <nav className={styles.nav} aria-label="Main">
      <div className={styles.navInner}>
        <NavLink to="/" end className={styles.navLink}>
          Casino
        </NavLink>
      </div>
    </nav>
  );
}
