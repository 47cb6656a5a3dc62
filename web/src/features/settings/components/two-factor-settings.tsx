import { useState, type SubmitEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Spinner } from '@/components/ui/spinner';
import { TextField } from '@/components/ui/text-field';
import { errorMessage } from '@/lib/api-client';
import { toast } from '@/lib/toast';
import {
  useDisableTwoFactor,
  useEnableTwoFactor,
  useSetupTwoFactor,
  useTwoFactor,
  type TwoFactorSetup,
} from '../api/two-factor';
import { CurrentPasswordField } from './current-password-field';
import styles from './settings.module.css';

export const CODE_REQUIRED = 'Enter the code from your authenticator app';
export const PASSWORD_REQUIRED = 'Current password is required';

/**
 * TwoFactorSettings turns two-factor sign-in (an authenticator app's codes)
 * on and off: a QR code and the key to type, a code and the current password
 * to confirm (a signed-in session alone cannot turn it on), then the
 * recovery codes, shown once.
 */
export function TwoFactorSettings() {
  const state = useTwoFactor();
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | null>(null);

  let body;
  if (recoveryCodes) {
    body = (
      <RecoveryCodes
        codes={recoveryCodes}
        onDone={() => {
          setRecoveryCodes(null);
        }}
      />
    );
  } else if (state.isPending) {
    body = <Spinner label="Loading two-factor settings" />;
  } else if (state.isError) {
    body = <Alert>{errorMessage(state.error, 'Failed to load your two-factor settings')}</Alert>;
  } else if (state.data.enabled) {
    body = <TurnOff codesLeft={state.data.recoveryCodesLeft} />;
  } else {
    body = <TurnOn onEnabled={setRecoveryCodes} />;
  }
  return (
    <section className={styles.panel} aria-labelledby="two-factor-heading">
      <h2 id="two-factor-heading" className={styles.panelTitle}>
        Two-Factor Authentication
      </h2>
      {body}
    </section>
  );
}

function TurnOn({ onEnabled }: { onEnabled: (codes: string[]) => void }) {
  const setup = useSetupTwoFactor();
  const enable = useEnableTwoFactor();
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);

  if (!setup.data) {
    return (
      <>
        <p className={styles.muted}>
          Sign-in will also ask for a code from an authenticator app (Google Authenticator, 1Password, Aegis…).
        </p>
        {setup.isError ? <Alert>{errorMessage(setup.error, 'Failed to start the setup')}</Alert> : null}
        <div>
          <Button
            onClick={() => {
              setup.mutate();
            }}
            disabled={setup.isPending}
          >
            {setup.isPending ? 'Starting...' : 'Turn On'}
          </Button>
        </div>
      </>
    );
  }

  const onSubmit = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (enable.isPending) return;
    if (code.trim() === '') {
      setError(CODE_REQUIRED);
      return;
    }
    if (password === '') {
      setError(PASSWORD_REQUIRED);
      return;
    }
    setError(null);
    enable.mutate(
      { code: code.trim(), password },
      {
        onSuccess: (res) => {
          setPassword('');
          toast.success('Two-factor authentication is on');
          onEnabled(res.recoveryCodes);
        },
        onError: (err) => {
          setError(errorMessage(err, 'Failed to turn on two-factor authentication'));
        },
        // Its variables hold the password: the mutation keeps none of it once answered.
        onSettled: () => {
          enable.reset();
        },
      },
    );
  };

  return (
    <form className={styles.form} onSubmit={onSubmit} noValidate>
      <p className={styles.muted}>Scan the QR code with your authenticator app, or type the key into it.</p>
      <QRCode setup={setup.data} />
      <p className={styles.note}>
        Key: <code className={styles.secret}>{setup.data.secret.replace(/(.{4})/g, '$1 ').trim()}</code>
      </p>
      <TextField
        label="Code from the app"
        name="code"
        autoComplete="one-time-code"
        inputMode="numeric"
        value={code}
        onChange={(event) => {
          setCode(event.target.value);
        }}
      />
      <CurrentPasswordField value={password} onChange={setPassword} />
      {error ? <Alert>{error}</Alert> : null}
      <div>
        <Button type="submit" disabled={enable.isPending}>
          {enable.isPending ? 'Confirming...' : 'Confirm'}
        </Button>
      </div>
    </form>
  );
}

/** QRCode draws the server's QR code inline (no image URL for the Content-Security-Policy to allow). */
function QRCode({ setup }: { setup: TwoFactorSetup }) {
  const quiet = 4; // modules of white margin, as the QR standard asks
  const size = setup.qrSize + 2 * quiet;
  return (
    <svg
      className={styles.qr}
      viewBox={`${-quiet} ${-quiet} ${size} ${size}`}
      role="img"
      aria-label="QR code for your authenticator app"
      shapeRendering="crispEdges"
    >
      <rect x={-quiet} y={-quiet} width={size} height={size} fill="#fff" />
      <path d={setup.qrPath} fill="#000" />
    </svg>
  );
}

function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  return (
    <div className={styles.form}>
      <p className={styles.note}>
        Save these recovery codes somewhere safe. Each signs you in once without the app. They are not shown again.
      </p>
      <ul className={styles.codes} aria-label="Recovery codes">
        {codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <div>
        <Button onClick={onDone}>I saved them</Button>
      </div>
    </div>
  );
}

function TurnOff({ codesLeft }: { codesLeft: number }) {
  const disable = useDisableTwoFactor();
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const onSubmit = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (disable.isPending) return;
    if (code.trim() === '') {
      setError(CODE_REQUIRED);
      return;
    }
    if (password === '') {
      setError(PASSWORD_REQUIRED);
      return;
    }
    setError(null);
    disable.mutate(
      { code: code.trim(), password },
      {
        onSuccess: (res) => {
          setCode('');
          setPassword('');
          toast.success(res.message);
        },
        onError: (err) => {
          setError(errorMessage(err, 'Failed to turn off two-factor authentication'));
        },
        // Its variables hold the password: the mutation keeps none of it once answered.
        onSettled: () => {
          disable.reset();
        },
      },
    );
  };
  return (
    <form className={styles.form} onSubmit={onSubmit} noValidate>
      <p>
        <span className={styles.badge}>On</span> Sign-in asks for a code from your authenticator app.{' '}
        <span className={styles.muted}>
          {codesLeft} recovery {codesLeft === 1 ? 'code' : 'codes'} left.
        </span>
      </p>
      <TextField
        label="Code to turn it off"
        name="code"
        autoComplete="one-time-code"
        hint="A code from the app, or one of your recovery codes."
        value={code}
        onChange={(event) => {
          setCode(event.target.value);
        }}
      />
      <CurrentPasswordField value={password} onChange={setPassword} />
      {error ? <Alert>{error}</Alert> : null}
      <div>
        <Button type="submit" variant="secondary" disabled={disable.isPending}>
          {disable.isPending ? 'Turning off...' : 'Turn Off'}
        </Button>
      </div>
    </form>
  );
}
