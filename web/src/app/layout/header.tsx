import { lazy, Suspense } from 'react';
import { Link, NavLink } from 'react-router';
import { Button } from '@/components/ui/button';
import { AuthButtons } from '@/features/auth/components/auth-buttons';
import { useLogout, useUser, type User } from '@/lib/auth';
import { formatMoney } from '@/lib/format';
import { ChevronIcon, UserIcon } from './header-icons';
import styles from './layout.module.css';

const AccountMenu = lazy(() => import('./account-menu'));

/**
 * AccountMenuPlaceholder stands in for the account menu's button while its
 * chunk loads: the same box and look, so nothing in the header moves when the
 * real button replaces it, but hidden from assistive technology and not
 * focusable, as it does nothing yet.
 */
function AccountMenuPlaceholder({ user }: { user: User }) {
  return (
    <span className={`${styles.menuButton} ${styles.narrowOnly}`} aria-hidden="true">
      <UserIcon />
      <span className={styles.menuName}>{user.username}</span>
      <ChevronIcon />
    </span>
  );
}

function UserMenu({ user }: { user: User }) {
  const logout = useLogout();
  const onLogout = () => {
    logout.mutate();
  };
  return (
    <>
      <div className={styles.balance}>
        <span className={styles.balanceLabel}>Balance</span>
        <span className={styles.balanceValue} data-testid="balance">
          {formatMoney(user.balance)}
        </span>
      </div>
      {/* Wide screens keep the links of SPEC.md §2 in the header; narrower ones fold them into AccountMenu. */}
      <span className={`${styles.username} ${styles.wideOnly}`} title="Signed in as">
        <UserIcon />
        {user.username}
      </span>
      <NavLink to="/bets" className={`${styles.headerLink} ${styles.wideOnly}`}>
        My Bets
      </NavLink>
      {user.isAdmin ? (
        <NavLink to="/admin" className={`${styles.headerLink} ${styles.wideOnly}`}>
          Admin
        </NavLink>
      ) : null}
      <NavLink to="/settings" className={`${styles.headerLink} ${styles.wideOnly}`}>
        Settings
      </NavLink>
      <Button variant="ghost" className={styles.wideOnly} disabled={logout.isPending} onClick={onLogout}>
        Log Out
      </Button>
      <Suspense fallback={<AccountMenuPlaceholder user={user} />}>
        <AccountMenu user={user} onLogout={onLogout} loggingOut={logout.isPending} />
      </Suspense>
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
          <span className={styles.brandName}>Fairplay</span>
        </Link>
        <div className={styles.account}>
          {user.isPending ? null : user.data ? <UserMenu user={user.data} /> : <AuthButtons />}
        </div>
      </div>
    </header>
  );
}
