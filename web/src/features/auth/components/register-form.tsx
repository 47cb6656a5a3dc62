import { useState, type SubmitEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { DialogClose } from '@/components/ui/dialog';
import { TextField } from '@/components/ui/text-field';
import { errorMessage } from '@/lib/api-client';
import { useRegister } from '@/lib/auth';
import {
  PASSWORD_MIN_LENGTH,
  sanitizeUsername,
  USERNAME_MAX_LENGTH,
  validateRegister,
} from '../utils/validate-register';
import styles from './auth-forms.module.css';
import { BotCheck } from './bot-check';

export interface RegisterFormProps {
  onSuccess: () => void;
  onSwitchToSignIn: () => void;
}

export function RegisterForm({ onSuccess, onSwitchToSignIn }: RegisterFormProps) {
  const [username, setUsername] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [confirmPassword, setConfirmPassword] = useState('');
  const [turnstileToken, setTurnstileToken] = useState('');
  const [botCheckKey, setBotCheckKey] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const register = useRegister();

  const onSubmit = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (register.isPending) return;
    const invalid = validateRegister({ username, email, password, confirmPassword, turnstileToken });
    setError(invalid);
    if (invalid) return;
    register.mutate(
      { username, email: email.trim(), password, turnstileToken },
      {
        onSuccess,
        onError: (err) => {
          setError(errorMessage(err, 'Failed to register'));
          setTurnstileToken('');
          setBotCheckKey((key) => key + 1);
        },
      },
    );
  };

  return (
    // noValidate: the app's own messages (SPEC.md §5), never the browser's bubbles.
    <form className={styles.form} onSubmit={onSubmit} noValidate>
      <TextField
        label="Username"
        name="username"
        autoComplete="username"
        autoCapitalize="none"
        spellCheck={false}
        required
        maxLength={USERNAME_MAX_LENGTH}
        hint="3 to 20 characters: lowercase letters, numbers and underscores."
        value={username}
        onChange={(event) => {
          setUsername(sanitizeUsername(event.target.value));
        }}
      />
      <TextField
        label="Email"
        name="email"
        type="email"
        autoComplete="email"
        required
        value={email}
        onChange={(event) => {
          setEmail(event.target.value);
        }}
      />
      <TextField
        label="Password"
        name="password"
        type="password"
        autoComplete="new-password"
        required
        minLength={PASSWORD_MIN_LENGTH}
        value={password}
        onChange={(event) => {
          setPassword(event.target.value);
        }}
      />
      <TextField
        label="Confirm Password"
        name="confirmPassword"
        type="password"
        autoComplete="new-password"
        required
        minLength={PASSWORD_MIN_LENGTH}
        value={confirmPassword}
        onChange={(event) => {
          setConfirmPassword(event.target.value);
        }}
      />
      <BotCheck key={botCheckKey} action="register" onToken={setTurnstileToken} />
      {error ? <Alert>{error}</Alert> : null}
      <div className={styles.actions}>
        <DialogClose asChild>
          <Button variant="secondary">Cancel</Button>
        </DialogClose>
        <Button type="submit" disabled={register.isPending}>
          {register.isPending ? 'Creating account...' : 'Register'}
        </Button>
      </div>
      <p className={styles.switch}>
        Already have an account?{' '}
        <Button variant="link" onClick={onSwitchToSignIn}>
          Sign in instead
        </Button>
      </p>
    </form>
  );
}
