import { useEffect } from 'react';
import { Button } from '@/components/ui/button';
import { Spinner } from '@/components/ui/spinner';
import { logout } from '@/lib/auth';
import type { Session } from '../api/get-sessions';
import { useSessions } from '../api/get-sessions';
import { useRevokeOtherSessions } from '../api/revoke-other-sessions';
import { useRevokeSession } from '../api/revoke-session';
import styles from './settings.module.css';
import { SessionItem } from './session-item';

/** ActiveSessions lists the player's sessions. Failures are only logged (SPEC.md §8). */
export function ActiveSessions() {
  const sessions = useSessions();
  const revoke = useRevokeSession();
  const revokeOthers = useRevokeOtherSessions();

  useEffect(() => {
    if (sessions.error) console.error('Failed to fetch sessions', sessions.error);
  }, [sessions.error]);

  const onRevoke = (session: Session) => {
    revoke.mutate(session._id, {
      onSuccess: () => {
        // Ending this browser's own session is signing out.
        if (session.current) void logout();
      },
      onError: (err) => {
        console.error('Failed to revoke session', err);
      },
    });
  };

  const list = sessions.data ?? [];

  return (
    <section className={styles.panel} aria-labelledby="sessions-heading">
      <div className={styles.panelHeader}>
        <h2 id="sessions-heading" className={styles.panelTitle}>
          Active Sessions
        </h2>
        <div className={styles.panelActions}>
          <Button variant="secondary" size="sm" disabled={sessions.isFetching} onClick={() => void sessions.refetch()}>
            Refresh
          </Button>
          {list.length > 1 ? (
            <Button
              variant="danger"
              size="sm"
              disabled={revokeOthers.isPending}
              onClick={() => {
                revokeOthers.mutate(undefined, {
                  onError: (err) => {
                    console.error('Failed to revoke other sessions', err);
                  },
                });
              }}
            >
              Revoke All Other Sessions
            </Button>
          ) : null}
        </div>
      </div>
      {sessions.isPending ? (
        <Spinner label="Loading sessions" />
      ) : list.length === 0 ? (
        <p className={styles.muted}>No active sessions found.</p>
      ) : (
        <ul className={styles.sessions}>
          {list.map((session) => (
            <SessionItem
              key={session._id}
              session={session}
              revoking={revoke.isPending && revoke.variables === session._id}
              onRevoke={onRevoke}
            />
          ))}
        </ul>
      )}
      <p className={styles.note}>Sessions are automatically expired after 30 days of inactivity.</p>
    </section>
  );
}
