import { useNavigate } from 'react-router';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent } from '@/components/ui/dialog';
import { formatCount, formatMoney } from '@/lib/format';
import type { RealityCheck } from '../api/limits';
import styles from './settings.module.css';

/**
 * RealityCheckDialog is the reality check's reminder (RealityCheckReminder loads it when
 * one is due): how long the player has been signed in and their result since, with a way
 * to set limits or take a break.
 */
export default function RealityCheckDialog({
  check,
  signedInFor,
  onClose,
}: {
  check: RealityCheck;
  /** signedInFor is the time since sign-in as written for the player ("1 h 5 min"). */
  signedInFor: string;
  onClose: () => void;
}) {
  const navigate = useNavigate();
  return (
    <Dialog
      open
      onOpenChange={(open) => {
        if (!open) onClose();
      }}
    >
      <DialogContent title="Reality Check" description={`You have been signed in for ${signedInFor}.`}>
        <p className={styles.muted}>
          Since you signed in: {formatCount(check.bets)} {check.bets === 1 ? 'bet' : 'bets'},{' '}
          {formatMoney(check.wagered)} wagered, net result <strong>{formatMoney(check.net)}</strong>.
        </p>
        <div className={styles.panelActions}>
          <Button
            variant="ghost"
            onClick={() => {
              onClose();
              void navigate('/settings?tab=limits');
            }}
          >
            Set Limits or a Break
          </Button>
          <Button onClick={onClose}>Keep Playing</Button>
        </div>
      </DialogContent>
    </Dialog>
  );
}
