import { formatTimeSince } from '@/lib/relative-time';
import { Button } from '@/components/ui/button';
import type { Session } from '../api/get-sessions';
import { deviceLabel, isMobileDevice } from '../utils/device-label';
import { ipLabel } from '../utils/ip-label';
import styles from './settings.module.css';

function DeviceIcon({ mobile }: { mobile: boolean }) {
  return (
    <svg role="img" aria-label={mobile ? 'Mobile device' : 'Desktop device'} viewBox="0 0 24 24" width="28" height="28">
      {mobile ? (
        <>
          <rect x="7" y="2.5" width="10" height="19" rx="2" fill="none" stroke="currentColor" strokeWidth="1.8" />
          <path d="M11 18.5h2" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" />
        </>
      ) : (
        <>
          <rect x="2.5" y="4" width="19" height="12.5" rx="1.5" fill="none" stroke="currentColor" strokeWidth="1.8" />
          <path d="M8 20.5h8M12 16.5v4" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" />
        </>
      )}
    </svg>
  );
}

export interface SessionItemProps {
  session: Session;
  revoking: boolean;
  onRevoke: (session: Session) => void;
  now?: Date;
}

export function SessionItem({ session, revoking, onRevoke, now }: SessionItemProps) {
  const label = deviceLabel(session.deviceInfo);
  return (
    <li className={styles.session}>
      <span className={styles.sessionIcon}>
        <DeviceIcon mobile={isMobileDevice(session.deviceInfo)} />
      </span>
      <div className={styles.sessionBody}>
        <p className={styles.sessionTitle}>
          {label}
          {session.current ? <span className={styles.badge}>This device</span> : null}
        </p>
        <p className={styles.muted}>Last active: {formatTimeSince(session.lastUsedAt, now)} ago</p>
        <p className={styles.muted}>IP: {ipLabel(session.ipAddress, session.ipScope)}</p>
      </div>
      <Button
        variant="danger"
        size="sm"
        disabled={revoking}
        aria-label={`Revoke ${label} session${session.current ? ' (this device)' : ''}`}
        onClick={() => {
          onRevoke(session);
        }}
      >
        Revoke
      </Button>
    </li>
  );
}
