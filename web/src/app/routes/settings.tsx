import { useNavigate } from 'react-router';
import { Button } from '@/components/ui/button';
import { PageSpinner } from '@/components/ui/spinner';
import { AccountSettings } from '@/features/settings/components/account-settings';
import { useUser } from '@/lib/auth';
import styles from './routes.module.css';

export default function SettingsRoute() {
  const user = useUser();
  const navigate = useNavigate();
  if (user.isPending) return <PageSpinner />;
  if (!user.data) {
    return (
      <div className={styles.message}>
        <title>Settings · Fairplay</title>
        <h1>Account Settings</h1>
        <p>Please log in to access your settings.</p>
        <Button onClick={() => void navigate('/')}>Go to Home</Button>
      </div>
    );
  }
  return (
    <>
      <title>Settings · Fairplay</title>
      <AccountSettings user={user.data} />
    </>
  );
}
