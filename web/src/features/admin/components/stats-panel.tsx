import { Alert } from '@/components/ui/alert';
import { Spinner } from '@/components/ui/spinner';
import { Tabs, TabsContent, TabsList, TabsTrigger } from '@/components/ui/tabs';
import { errorMessage } from '@/lib/api-client';
import { formatCount, formatMoney } from '@/lib/format';
import { useActivityStats } from '../api/get-activity-stats';
import { useUserStats } from '../api/get-user-stats';
import { useWageringStats } from '../api/get-wagering-stats';
import { ActivityTable } from './activity-table';
import styles from './admin.module.css';
import { StatCard } from './stat-card';

function UsersStats() {
  const stats = useUserStats();
  if (stats.isPending) return <Spinner label="Loading user statistics" />;
  if (stats.isError) return <Alert>{errorMessage(stats.error, 'Failed to load user statistics')}</Alert>;
  const s = stats.data;
  return (
    <div className={styles.statGrid}>
      <StatCard label="Total Users" value={formatCount(s.totalUsers)} />
      <StatCard
        label="Users Past Month"
        value={formatCount(s.usersLastMonth)}
        change={{ percent: s.usersLastMonthPercentChange, period: 'month' }}
      />
      <StatCard
        label="Users Past Week"
        value={formatCount(s.usersLastWeek)}
        change={{ percent: s.usersLastWeekPercentChange, period: 'week' }}
      />
    </div>
  );
}

// Mounted only while its tab is open, so the first opening loads it; the
// query never goes stale, so it is loaded once.
function MoneyStats() {
  const stats = useWageringStats({ enabled: true });
  if (stats.isPending) return <Spinner label="Loading wagering statistics" />;
  if (stats.isError) return <Alert>{errorMessage(stats.error, 'Failed to load wagering statistics')}</Alert>;
  const s = stats.data;
  return (
    <div className={styles.statGrid}>
      <StatCard label="Total Wagered" value={formatMoney(s.totalWagered)} />
      <StatCard
        label="Wagered Past Month"
        value={formatMoney(s.wageredLastMonth)}
        change={{ percent: s.wageredLastMonthPercentChange, period: 'month' }}
      />
      <StatCard
        label="Wagered Past Week"
        value={formatMoney(s.wageredLastWeek)}
        change={{ percent: s.wageredLastWeekPercentChange, period: 'week' }}
      />
    </div>
  );
}

function ActivityStats() {
  const stats = useActivityStats({ enabled: true });
  if (stats.isPending) return <Spinner label="Loading activity statistics" />;
  if (stats.isError) return <Alert>{errorMessage(stats.error, 'Failed to load activity statistics')}</Alert>;
  return <ActivityTable stats={stats.data} />;
}

export function StatsPanel() {
  return (
    <section className={styles.panel} aria-labelledby="stats-heading">
      <h2 id="stats-heading" className={styles.panelTitle}>
        Statistics
      </h2>
      <Tabs defaultValue="users">
        <TabsList aria-label="Statistics">
          <TabsTrigger value="users">Users</TabsTrigger>
          <TabsTrigger value="money">Money</TabsTrigger>
          <TabsTrigger value="activity">Activity</TabsTrigger>
        </TabsList>
        <TabsContent value="users" className={styles.tabBody}>
          <UsersStats />
        </TabsContent>
        <TabsContent value="money" className={styles.tabBody}>
          <MoneyStats />
        </TabsContent>
        <TabsContent value="activity" className={styles.tabBody}>
          <ActivityStats />
        </TabsContent>
      </Tabs>
    </section>
  );
}
