import { useState, type SubmitEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { TextField } from '@/components/ui/text-field';
import { errorMessage } from '@/lib/api-client';
import { logout } from '@/lib/auth';
import { toast } from '@/lib/toast';
import { useChangePassword } from '../api/change-password';
import { validateChangePassword } from '../utils/validate-password';
import styles from './settings.module.css';

/** LOGOUT_AFTER_CHANGE_MS: after a password change the player is signed out (SPEC.md §4). */
export const LOGOUT_AFTER_CHANGE_MS = 3000;

export const PASSWORD_CHANGED_MESSAGE = 'Password changed successfully. You will be logged out in a few seconds.';

const EMPTY = { currentPassword: '', newPassword: '', confirmPassword: '' };

export function ChangePasswordForm() {
  const [values, setValues] = useState(EMPTY);
  const [error, setError] = useState<string | null>(null);
  const change = useChangePassword();

  const set = (field: keyof typeof EMPTY) => (event: { target: { value: string } }) => {
    setValues((v) => ({ ...v, [field]: event.target.value }));
  };

  const onSubmit = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (change.isPending) return;
    const invalid = validateChangePassword(values);
    setError(invalid);
    if (invalid) return;
    change.mutate(
      { currentPassword: values.currentPassword, newPassword: values.newPassword },
      {
        onSuccess: () => {
          setValues(EMPTY);
          toast.success(PASSWORD_CHANGED_MESSAGE);
          // Not tied to this component: leaving the page must not cancel the sign-out.
          window.setTimeout(() => void logout(), LOGOUT_AFTER_CHANGE_MS);
        },
        onError: (err) => {
          setError(errorMessage(err, 'Failed to change password'));
        },
        // Its variables hold the password: the mutation keeps none of it once answered.
        onSettled: () => {
          change.reset();
        },
      },
    );
  };

  return (
    <section className={styles.panel} aria-labelledby="change-password-heading">
      <h2 id="change-password-heading" className={styles.panelTitle}>
        Change Password
      </h2>
      <form className={styles.form} onSubmit={onSubmit} noValidate>
        <TextField
          label="Current Password"
          type="password"
          name="currentPassword"
          autoComplete="current-password"
          value={values.currentPassword}
          onChange={set('currentPassword')}
        />
        <TextField
          label="New Password"
          type="password"
          name="newPassword"
          autoComplete="new-password"
          hint={
            '6 to 128 characters with an uppercase letter, a lowercase letter, a number and one of !@#$%^&*(),.?":{}|<>'
          }
          value={values.newPassword}
          onChange={set('newPassword')}
        />
        <TextField
          label="Confirm New Password"
          type="password"
          name="confirmPassword"
          autoComplete="new-password"
          value={values.confirmPassword}
          onChange={set('confirmPassword')}
        />
        {error ? <Alert>{error}</Alert> : null}
        <div>
          <Button type="submit" disabled={change.isPending}>
            {change.isPending ? 'Changing Password...' : 'Change Password'}
          </Button>
        </div>
      </form>
    </section>
  );
}
