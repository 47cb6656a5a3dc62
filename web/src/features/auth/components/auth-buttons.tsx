import { lazy, Suspense, useState } from 'react';
import { Button } from '@/components/ui/button';
import type { AuthDialogMode } from './auth-dialog';

// The dialogs are loaded on first use so the home page ships less JavaScript.
const loadAuthDialog = () => import('./auth-dialog');
const AuthDialog = lazy(loadAuthDialog);

function prefetch() {
  void loadAuthDialog();
}

/** AuthButtons are the guest's Sign In and Register buttons and the modal dialogs they open. */
export function AuthButtons() {
  const [mode, setMode] = useState<AuthDialogMode | null>(null);
  return (
    <>
      <Button
        variant="secondary"
        onPointerEnter={prefetch}
        onFocus={prefetch}
        onClick={() => {
          setMode('signin');
        }}
        aria-haspopup="dialog"
      >
        Sign In
      </Button>
      <Button
        onPointerEnter={prefetch}
        onFocus={prefetch}
        onClick={() => {
          setMode('register');
        }}
        aria-haspopup="dialog"
      >
        Register
      </Button>
      {mode ? (
        <Suspense fallback={null}>
          <AuthDialog
            mode={mode}
            onModeChange={setMode}
            onClose={() => {
              setMode(null);
            }}
          />
        </Suspense>
      ) : null}
    </>
  );
}
