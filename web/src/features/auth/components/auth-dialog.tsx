import { Dialog, DialogContent } from '@/components/ui/dialog';
import { RegisterForm } from './register-form';
import { SignInForm } from './sign-in-form';

export type AuthDialogMode = 'signin' | 'register';

export interface AuthDialogProps {
  mode: AuthDialogMode;
  onModeChange: (mode: AuthDialogMode) => void;
  onClose: () => void;
}

/** AuthDialog is the Sign In or Register modal (SPEC.md §2). */
export default function AuthDialog({ mode, onModeChange, onClose }: AuthDialogProps) {
  return (
    <Dialog
      open
      onOpenChange={(open) => {
        if (!open) onClose();
      }}
    >
      {mode === 'signin' ? (
        <DialogContent key="signin" title="Sign In" description="Welcome back. Sign in to play.">
          <SignInForm
            onSuccess={onClose}
            onSwitchToRegister={() => {
              onModeChange('register');
            }}
          />
        </DialogContent>
      ) : (
        <DialogContent key="register" title="Register" description="Create an account and get play money to start.">
          <RegisterForm
            onSuccess={onClose}
            onSwitchToSignIn={() => {
              onModeChange('signin');
            }}
          />
        </DialogContent>
      )}
    </Dialog>
  );
}
