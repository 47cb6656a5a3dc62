import { Link, NavLink } from 'react-router';
import { Button } from '@/components/ui/button';
import { AuthButtons } from '@/features/auth/components/auth-buttons';
import { useLogout, useUser, type User } from '@/lib/auth';
import { formatMoney } from '@/lib/format';
import styles from './layout.module.css';

function UserMenu({ user }: { user: User }) {
  const logout = useLogout();
  return (
    <>
      <div className={styles.balance}>
        <span className={styles.balanceLabel}>Balance</span>
        <span className={styles.balanceValue} data-testid="balance">
          {formatMoney(user.balance)}
        </span>
      </div>
      <span className={styles.username} title="Signed in as">
        <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
          <circle cx="12" cy="8" r="4" fill="none" stroke="currentColor" strokeWidth="2" />
          <path
            d="M4 21c1-4 4.5-6 8-6s7 2 8 6"
            fill="none"
            stroke="currentColor"
            strokeWidth="2"
            strokeLinecap="round"
          />
        </svg>
        {user.username}
      </span>
      {user.isAdmin ? (
        <NavLink to="/admin" className={styles.headerLink}>
          Admin
        </NavLink>
      ) : null}
      <NavLink to="/settings" className={styles.headerLink}>
        Settings
      </NavLink>
      <Button
        variant="ghost"
        disabled={logout.isPending}
        onClick={() => {
          logout.mutate();
        }}
      >
        Log Out
      </Button>
    </>
  );
}

export function Header() {
  const user = useUser();
  return (
    <header className={styles.header}>
      <div className={styles.headerInner}>
        <Link to="/" className={styles.brand} aria-label="Fairplay home">
          <svg viewBox="0 0 32 32" width="28" height="28" aria-hidden="true">
            <rect width="32" height="32" rx="7" fill="var(--accent)" />
            <rect x="8" y="8" width="16" height="16" rx="3" fill="var(--bg)" />
            <circle cx="12.5" cy="12.5" r="2" fill="var(--accent)" />
            <circle cx="16" cy="16" r="2" fill="var(--accent)" />
            <circle cx="19.5" cy="19.5" r="2" fill="var(--accent)" />
          </svg>
          <span>Fairplay</span>
        </Link>
        <div className={styles.account}>
          {user.isPending ? null : user.data ? <UserMenu user={user.data} /> : <AuthButtons />}
        </div>
      </div>
    </header>
  );
}
