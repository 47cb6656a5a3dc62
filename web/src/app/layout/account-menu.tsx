import { Link } from 'react-router';
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuLabel,
  DropdownMenuSeparator,
  DropdownMenuTrigger,
} from '@/components/ui/dropdown-menu';
import type { User } from '@/lib/auth';
import styles from './layout.module.css';
import { ChevronIcon, UserIcon } from './header-icons';

/**
 * AccountMenu is the phone and tablet header's menu: the username on its
 * button, and My Bets, Settings, Admin (admins) and Log Out inside. It is a
 * chunk of its own (header.tsx loads it lazily): Radix's menu, its popper and
 * focus handling are a sixth of the entry chunk, and only a signed-in reader
 * on a narrow screen opens it.
 */
export default function AccountMenu({
  user,
  onLogout,
  loggingOut,
}: {
  user: User;
  onLogout: () => void;
  loggingOut: boolean;
}) {
  return (
    <DropdownMenu>
      <DropdownMenuTrigger className={`${styles.menuButton} ${styles.narrowOnly}`}>
        <UserIcon />
        <span className={styles.menuName}>{user.username}</span>
        <span className="sr-only">, account menu</span>
        <ChevronIcon />
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
