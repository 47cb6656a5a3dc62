import { Link, NavLink } from 'react-router';
import { Button } from '@/components/ui/button';
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuLabel,
  DropdownMenuSeparator,
  DropdownMenuTrigger,
} from '@/components/ui/dropdown-menu';
import { AuthButtons } from '@/features/auth/components/auth-buttons';
import { useLogout, useUser, type User } from '@/lib/auth';
import { formatMoney } from '@/lib/format';
import styles from './layout.module.css';

function UserIcon() {
  return (
    <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
      <circle cx="12" cy="8" r="4" fill="none" stroke="currentColor" strokeWidth="2" />
      <path d="M4 21c1-4 4.5-6 8-6s7 2 8 6" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
    </svg>
  );
}

/**
 * AccountMenu is the phone and tablet header's menu: the username on its
 * button, and My Bets, Settings, Admin (admins) and Log Out inside.
 */
function AccountMenu({ user, onLogout, loggingOut }: { user: User; onLogout: () => void; loggingOut: boolean }) {
  return (
    <DropdownMenu>
      <DropdownMenuTrigger className={`${styles.menuButton} ${styles.narrowOnly}`}>
        <UserIcon />
        <span className={styles.menuName}>{user.username}</span>
        <span className="sr-only">, account menu</span>
        <svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true">
          <path d="M6 9l6 6 6-6" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
        </svg>
      </DropdownMenuTrigger>
      <DropdownMenuContent>
        <DropdownMenuLabel>{`Signed in as ${user.username}`}</DropdownMenuLabel>
        <DropdownMenuItem asChild>
          <Link to="/bets">My Bets</Link>
        </DropdownMenuItem>
        <DropdownMenuItem asChild>
          <Link to="/settings">Settings</Link>
        </DropdownMenuItem>
        {user.isAdmin ? (
          <DropdownMenuItem asChild>
            <Link to="/admin">Admin</Link>
          </DropdownMenuItem>
        ) : null}
        <DropdownMenuSeparator />
        <DropdownMenuItem disabled={loggingOut} onSelect={onLogout}>
          Log Out
        </DropdownMenuItem>
      </DropdownMenuContent>
    </DropdownMenu>
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
      <AccountMenu user={user} onLogout={onLogout} loggingOut={logout.isPending} />
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
