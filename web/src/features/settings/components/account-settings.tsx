import { useNavigate, useSearchParams } from 'react-router';
import { Button } from '@/components/ui/button';
import { Tabs, TabsContent, TabsList, TabsTrigger } from '@/components/ui/tabs';
import { logout, type User } from '@/lib/auth';
import { AccountInfo } from './account-info';
import { ActiveSessions } from './active-sessions';
import { ChangePasswordForm } from './change-password-form';
import { PrivacySettings } from './privacy-settings';
import { ResponsibleGambling } from './responsible-gambling';
import { TwoFactorSettings } from './two-factor-settings';
import styles from './settings.module.css';

type Section = 'account' | 'security' | 'limits';

const SECTIONS: readonly Section[] = ['account', 'security', 'limits'];

/** AccountSettings is the signed-in player's settings screen (SPEC.md §2). */
export function AccountSettings({ user }: { user: User }) {
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const tab = params.get('tab');
  const section: Section = SECTIONS.find((s) => s === tab) ?? 'account';

  return (
    <div className={styles.page}>
      <h1 className={styles.pageTitle}>Account Settings</h1>
      <Tabs
        orientation="vertical"
        value={section}
        onValueChange={(value) => {
          setParams(value === 'account' ? {} : { tab: value }, { replace: true });
        }}
      >
        <div className={styles.sideMenu}>
          <TabsList aria-label="Settings sections">
            <TabsTrigger value="account">Account Information</TabsTrigger>
            <TabsTrigger value="security">Security &amp; Sessions</TabsTrigger>
            <TabsTrigger value="limits">Responsible Gambling</TabsTrigger>
          </TabsList>
          <Button
            variant="ghost"
            className={styles.logout}
            onClick={() => {
              void logout().then(() => navigate('/'));
            }}
          >
            Logout
          </Button>
        </div>
        <TabsContent value="account" className={styles.stack}>
          <AccountInfo user={user} />
          <PrivacySettings user={user} />
        </TabsContent>
        <TabsContent value="security" className={styles.stack}>
          <ChangePasswordForm />
          <TwoFactorSettings />
          <ActiveSessions />
        </TabsContent>
        <TabsContent value="limits" className={styles.stack}>
          <ResponsibleGambling />
        </TabsContent>
      </Tabs>
    </div>
  );
}
