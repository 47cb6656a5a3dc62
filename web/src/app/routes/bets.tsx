import { PageSpinner } from '@/components/ui/spinner';
import { AuthButtons } from '@/features/auth/components/auth-buttons';
import { BetHistory } from '@/features/bets/components/bet-history';
import { RevealSeedButton } from '@/features/fairness/components/reveal-seed-button';
import { useUser } from '@/lib/auth';
import styles from './routes.module.css';

export default function BetsRoute() {
  const user = useUser();
  if (user.isPending) return <PageSpinner />;
  if (!user.data) {
    return (
      <div className={styles.message}>
        <title>My Bets · Fairplay</title>
        <h1>My Bets</h1>
        <p>Sign in to see your bets, their fairness data and their verification.</p>
        <div className={styles.actions}>
          <AuthButtons />
        </div>
      </div>
    );
  }
  return (
    <>
      <title>My Bets · Fairplay</title>
      {/* The account is the key: another player's history never shows a moment under this one's name. */}
      <BetHistory key={user.data._id} revealAction={<RevealSeedButton />} />
    </>
  );
}
