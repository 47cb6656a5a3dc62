import type { User } from '@/lib/auth';
import { formatMoney } from '@/lib/format';
import styles from './settings.module.css';

export function AccountInfo({ user }: { user: User }) {
  return (
    <section className={styles.panel} aria-labelledby="account-info-heading">
      <h2 id="account-info-heading" className={styles.panelTitle}>
        Account Information
      </h2>
      <dl className={styles.details}>
        <div>
          <dt>Username</dt>
          <dd>{user.username}</dd>
        </div>
        <div>
          <dt>Email</dt>
          <dd>{user.email}</dd>
        </div>
        <div>
          <dt>Current Balance</dt>
          <dd className={styles.balance}>{formatMoney(user.balance)}</dd>
        </div>
        <div>
          <dt>Account Type</dt>
          <dd>{user.isAdmin ? 'Administrator' : 'Regular User'}</dd>
        </div>
      </dl>
    </section>
  );
}
