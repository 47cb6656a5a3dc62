import { useState, type SubmitEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { DialogClose } from '@/components/ui/dialog';
import { TextField } from '@/components/ui/text-field';
import { errorMessage } from '@/lib/api-client';
import { useLogin } from '@/lib/auth';
import { PASSWORD_MIN_LENGTH, validateSignIn } from '../utils/validate-register';
import styles from './auth-forms.module.css';
import { BotCheck } from './bot-check';

export const TWO_FACTOR_CODE_REQUIRED = 'Enter the code from your authenticator app';

export interface SignInFormProps {
  onSuccess: () => void;
  onSwitchToRegister: () => void;
}

export function SignInForm({ onSuccess, onSwitchToRegister }: SignInFormProps) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [turnstileToken, setTurnstileToken] = useState('');
  const [botCheckKey, setBotCheckKey] = useState(0);
  const [error, setError] = useState<string | null>(null);
  /** twoFactor: the password was right and the account asks for a two-factor code (sent with the login again). */
  const [twoFactor, setTwoFactor] = useState(false);
  const [code, setCode] = useState('');
  const login = useLogin();
  // A bot-check token is single-use: every answer starts a fresh check.
  const resetBotCheck = () => {
    setTurnstileToken('');
    setBotCheckKey((key) => key + 1);
  };

  const onSubmit = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (login.isPending) return;
    const invalid = twoFactor && code.trim() === '' ? TWO_FACTOR_CODE_REQUIRED : validateSignIn({ turnstileToken });
    setError(invalid);
    if (invalid) return;
    login.mutate(
      { username: username.trim(), password, turnstileToken, twoFactorCode: twoFactor ? code.trim() : '' },
      {
        onSuccess: (res) => {
          if (res.twoFactorRequired) {
            setTwoFactor(true);
            resetBotCheck();
            return;
          }
          onSuccess();
        },
        onError: (err) => {
          setError(errorMessage(err, 'Failed to login'));
          resetBotCheck();
        },
      },
    );
  };

  return (
    <form className={styles.form} onSubmit={onSubmit}>
      <TextField
        label="Username or Email"
        name="username"
        autoComplete="username"
        autoCapitalize="none"
        spellCheck={false}
        required
        value={username}
        onChange={(event) => {
          setUsername(event.target.value);
        }}
      />
      <TextField
        label="Password"
        name="password"
        type="password"
        autoComplete="current-password"
        required
        minLength={PASSWORD_MIN_LENGTH}
        value={password}
        onChange={(event) => {
          setPassword(event.target.value);
        }}
      />
      {twoFactor ? (
        <TextField
          label="Two-factor code"
          name="twoFactorCode"
          autoComplete="one-time-code"
          inputMode="text"
          autoCapitalize="none"
          spellCheck={false}
          autoFocus
          hint="The 6-digit code from your authenticator app, or one of your recovery codes."
          value={code}
          onChange={(event) => {
            setCode(event.target.value);
          }}
        />
      ) : null}
      <BotCheck key={botCheckKey} action="login" onToken={setTurnstileToken} />
      {error ? <Alert>{error}</Alert> : null}
      <div className={styles.actions}>
        <DialogClose asChild>
          <Button variant="secondary">Cancel</Button>
        </DialogClose>
        <Button type="submit" disabled={login.isPending}>
          {login.isPending ? 'Signing in...' : 'Sign In'}
        </Button>
      </div>
      <p className={styles.switch}>
        No account yet?{' '}
        <Button variant="link" onClick={onSwitchToRegister}>
          Create one
        </Button>
      </p>
    </form>
  );
}
