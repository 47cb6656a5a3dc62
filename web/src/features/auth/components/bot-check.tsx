import { Button } from '@/components/ui/button';
import { Spinner } from '@/components/ui/spinner';
import { useAuthConfig } from '../api/get-auth-config';
import styles from './auth-forms.module.css';
import { TurnstileWidget } from './turnstile-widget';

export interface BotCheckProps {
  action: 'login' | 'register';
  onToken: (token: string) => void;
}

/**
 * BotCheck renders Cloudflare Turnstile when the server has a site key, and
 * otherwise the development check, which yields the server's development
 * token. Remount it (change its key) to reset it.
 */
export function BotCheck({ action, onToken }: BotCheckProps) {
  const config = useAuthConfig();

  if (config.isPending) {
    return (
      <div className={styles.botCheck}>
        <Spinner label="Loading verification" />
      </div>
    );
  }
  if (config.isError) {
    return (
      <div className={styles.botCheck}>
        <p role="alert">Could not load the verification.</p>
        <Button variant="secondary" size="sm" onClick={() => void config.refetch()}>
          Retry
        </Button>
      </div>
    );
  }
  const { turnstileSiteKey, developmentToken } = config.data;
  if (turnstileSiteKey) {
    return <TurnstileWidget siteKey={turnstileSiteKey} action={action} onToken={onToken} />;
  }
  return (
    <label className={styles.devCheck}>
      <input
        type="checkbox"
        onChange={(event) => {
          onToken(event.target.checked ? developmentToken : '');
        }}
      />
      <span>I am not a robot (development check)</span>
    </label>
  );
}
