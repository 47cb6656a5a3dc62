import { Alert } from '@/components/ui/alert';
import { Switch } from '@/components/ui/switch';
import { errorMessage } from '@/lib/api-client';
import type { User } from '@/lib/auth';
import { useUpdatePreferences } from '../api/update-preferences';
import styles from './settings.module.css';

/** PrivacySettings holds the player's privacy choices: whether the live bets table names them. */
export function PrivacySettings({ user }: { user: User }) {
  const update = useUpdatePreferences();
  // While saving, the switch shows the choice being saved; a failure puts it back.
  const checked =
    update.isPending && update.variables.hideUsername !== undefined ? update.variables.hideUsername : user.hideUsername;
  return (
    <section className={styles.panel} aria-labelledby="privacy-heading">
      <h2 id="privacy-heading" className={styles.panelTitle}>
        Privacy
      </h2>
      <Switch
        label="Hide my username in live bets"
        description="Other players see “Hidden” instead of your name next to your bets."
        checked={checked}
        disabled={update.isPending}
        onChange={(hideUsername) => {
          update.mutate({ hideUsername });
        }}
      />
      {update.isError ? <Alert>{errorMessage(update.error, 'Failed to save your privacy setting')}</Alert> : null}
    </section>
  );
}
