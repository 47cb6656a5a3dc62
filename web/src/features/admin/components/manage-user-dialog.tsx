import { useId, useState, type SubmitEvent } from 'react';
import { Button } from '@/components/ui/button';
import { Dialog, DialogClose, DialogContent } from '@/components/ui/dialog';
import { errorMessage } from '@/lib/api-client';
import { formatMoney } from '@/lib/format';
import { toast } from '@/lib/toast';
import { useDeleteUser } from '../api/delete-user';
import type { AdminUser } from '../api/types';
import { useUpdateUserBalance } from '../api/update-user-balance';
import styles from './admin.module.css';

/** parseAmount reads the adjustment input; anything that is not a finite number counts as 0. */
export function parseAmount(text: string): number {
  const value = Number.parseFloat(text);
  return Number.isFinite(value) ? value : 0;
}

export interface ManageUserDialogProps {
  user: AdminUser;
  onClose: () => void;
}

/** ManageUserDialog adjusts a user's balance or deletes the user (SPEC.md §2, §8). */
export function ManageUserDialog({ user, onClose }: ManageUserDialogProps) {
  const amountId = useId();
  const [step, setStep] = useState<'manage' | 'confirm-delete'>('manage');
  const [amountText, setAmountText] = useState('');
  const [balance, setBalance] = useState(user.balance);
  const update = useUpdateUserBalance();
  const remove = useDeleteUser();
  const amount = parseAmount(amountText);
  const busy = update.isPending || remove.isPending;

  const onUpdate = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (amount === 0 || busy) return;
    update.mutate(
      { userId: user._id, amount },
      {
        onSuccess: (res) => {
          setBalance(res.user.balance);
          setAmountText('');
          toast.success(`Successfully updated ${user.username}'s balance`);
        },
        onError: (err) => {
          toast.error(errorMessage(err, 'Failed to update balance'));
        },
      },
    );
  };

  const onDelete = () => {
    if (busy) return;
    remove.mutate(user._id, {
      onSuccess: () => {
        toast.success(`Successfully deleted user ${user.username}`);
        onClose();
      },
      onError: (err) => {
        toast.error(errorMessage(err, 'Failed to delete user'));
      },
    });
  };

  return (
    <Dialog
      open
      onOpenChange={(open) => {
        if (!open) onClose();
      }}
    >
      <DialogContent title="Manage User" preventOutsideClose={busy}>
        {step === 'manage' ? (
          <div className={styles.manage}>
            <dl className={styles.userFacts}>
              <div>
                <dt>Username</dt>
                <dd>{user.username}</dd>
              </div>
              <div>
                <dt>Email</dt>
                <dd>{user.email}</dd>
              </div>
              <div>
                <dt>Current Balance</dt>
                <dd className={styles.money}>{formatMoney(balance)}</dd>
              </div>
              <div>
                <dt>Admin</dt>
                <dd>{user.isAdmin ? 'Yes' : 'No'}</dd>
              </div>
            </dl>
            <form className={styles.adjust} onSubmit={onUpdate}>
              <label htmlFor={amountId} className={styles.fieldLabel}>
                Amount to Add/Remove
              </label>
              <input
                id={amountId}
                className={styles.amountInput}
                type="number"
                inputMode="decimal"
                step="0.01"
                placeholder="0.00"
                aria-describedby={`${amountId}-hint`}
                value={amountText}
                onChange={(event) => {
                  setAmountText(event.target.value);
                }}
              />
              <p id={`${amountId}-hint`} className={styles.hint}>
                Use a negative amount to subtract.
              </p>
              <Button type="submit" disabled={amount === 0 || busy}>
                {update.isPending ? 'Updating...' : 'Update Balance'}
              </Button>
            </form>
            <div className={styles.dialogActions}>
              <Button
                variant="danger"
                disabled={busy}
                onClick={() => {
                  setStep('confirm-delete');
                }}
              >
                Delete User
              </Button>
              <DialogClose asChild>
                <Button variant="secondary">Cancel</Button>
              </DialogClose>
            </div>
          </div>
        ) : (
          <div className={styles.manage}>
            <p role="alert">
              Are you sure you want to delete user &quot;{user.username}&quot;? This action cannot be undone.
            </p>
            <div className={styles.dialogActions}>
              <Button variant="danger" disabled={busy} onClick={onDelete}>
                {remove.isPending ? 'Deleting...' : 'Yes, Delete'}
              </Button>
              <Button
                variant="secondary"
                disabled={busy}
                onClick={() => {
                  setStep('manage');
                }}
              >
                Cancel
              </Button>
            </div>
          </div>
        )}
      </DialogContent>
    </Dialog>
  );
}
