import { useId, useState } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Spinner } from '@/components/ui/spinner';
import { useDebouncedCallback } from '@/hooks/use-debounced-callback';
import { ApiError, errorMessage } from '@/lib/api-client';
import { formatDate, formatMoney } from '@/lib/format';
import { useUsers } from '../api/get-users';
import { useSearchUsers } from '../api/search-users';
import type { AdminUser } from '../api/types';
import styles from './admin.module.css';
import { ManageUserDialog } from './manage-user-dialog';

export const SEARCH_DEBOUNCE_MS = 500;

/** listErrorMessage follows SPEC.md §8: a 401 that survived the refresh-and-retry is an authentication error. */
export function listErrorMessage(err: unknown, searching: boolean): string {
  if (err instanceof ApiError && err.status === 401) {
    return `Authentication error: ${err.serverMessage ?? 'No authentication token, access denied'}`;
  }
  return errorMessage(err, searching ? 'Failed to search users' : 'Failed to load users');
}

export function UserList() {
  const searchId = useId();
  const [input, setInput] = useState('');
  // The committed search (after the debounce) and the page within it.
  const [view, setView] = useState({ query: '', page: 1 });
  const [managed, setManaged] = useState<AdminUser | null>(null);
  const commit = useDebouncedCallback((query: string) => {
    setView((v) => (v.query === query ? v : { query, page: 1 }));
  }, SEARCH_DEBOUNCE_MS);

  const searching = view.query !== '';
  const list = useUsers(view.page, { enabled: !searching });
  const found = useSearchUsers(view.query, view.page, { enabled: searching });
  const users = searching ? found : list;
  const totalPages = Math.max(users.data?.totalPages ?? 1, 1);
  const rows = users.data?.users ?? [];

  const clearSearch = () => {
    commit.cancel();
    setInput('');
    setView({ query: '', page: 1 });
  };

  const goTo = (page: number) => {
    setView((v) => ({ ...v, page }));
  };

  return (
    <section className={styles.panel} aria-labelledby="users-heading">
      <div className={styles.panelHeader}>
        <h2 id="users-heading" className={styles.panelTitle}>
          User List
        </h2>
        <div className={styles.search}>
          <label htmlFor={searchId} className="sr-only">
            Search users
          </label>
          <input
            id={searchId}
            type="search"
            className={styles.searchInput}
            placeholder="Search by username or email"
            value={input}
            onChange={(event) => {
              setInput(event.target.value);
              commit.run(event.target.value.trim());
            }}
          />
        </div>
      </div>

      {users.isError ? <Alert>{listErrorMessage(users.error, searching)}</Alert> : null}

      {users.isPending ? (
        <Spinner label="Loading users" />
      ) : users.isError && rows.length === 0 ? null : rows.length === 0 ? (
        <p className={styles.muted}>{searching ? 'No users found matching your search.' : 'No users found.'}</p>
      ) : (
        // Its own scroll box on narrow screens; focusable so a keyboard can scroll it.
        <div
          className={styles.tableWrap}
          aria-busy={users.isFetching}
          role="region"
          aria-label="Users table"
          tabIndex={0}
        >
          <table className={styles.table}>
            <caption className="sr-only">Users</caption>
            <thead>
              <tr>
                <th scope="col">Username</th>
                <th scope="col">Email</th>
                <th scope="col" className={styles.num}>
                  Balance
                </th>
                <th scope="col">Admin</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((user) => (
                <tr key={user._id}>
                  <td>{user.username}</td>
                  <td className={styles.email}>{user.email}</td>
                  <td className={styles.num}>{formatMoney(user.balance)}</td>
                  <td>{user.isAdmin ? 'Yes' : 'No'}</td>
                  <td>{formatDate(user.createdAt)}</td>
                  <td>
                    <Button
                      size="sm"
                      variant="secondary"
                      aria-label={`Manage ${user.username}`}
                      onClick={() => {
                        setManaged(user);
                      }}
                    >
                      Manage
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      <nav className={styles.pagination} aria-label="User list pages">
        <Button
          size="sm"
          variant="secondary"
          disabled={view.page <= 1 || users.isFetching}
          onClick={() => {
            goTo(view.page - 1);
          }}
        >
          Previous
        </Button>
        <span aria-live="polite">
          {searching ? 'Search results: ' : ''}Page {view.page} of {totalPages}
        </span>
        <Button
          size="sm"
          variant="secondary"
          disabled={view.page >= totalPages || users.isFetching}
          onClick={() => {
            goTo(view.page + 1);
          }}
        >
          Next
        </Button>
      </nav>

      {searching ? (
        <p>
          <Button variant="link" onClick={clearSearch}>
            Clear search and show all users
          </Button>
        </p>
      ) : null}

      {managed ? (
        <ManageUserDialog
          user={managed}
          onClose={() => {
            setManaged(null);
          }}
        />
      ) : null}
    </section>
  );
}
