import styles from './admin.module.css';
import { StatsPanel } from './stats-panel';
import { UserList } from './user-list';

/** AdminDashboard is the administrators' page: statistics and user management (SPEC.md §2). */
export function AdminDashboard() {
  return (
    <div className={styles.page}>
      <h1 className={styles.pageTitle}>Admin Dashboard</h1>
      <StatsPanel />
      <UserList />
    </div>
  );
}
