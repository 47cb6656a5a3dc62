import { startTransition, useDeferredValue, useEffect, useState, type ComponentType, type ReactNode } from 'react';
import { GameFrame } from '@/components/layouts/game-frame';
import { Spinner } from '@/components/ui/spinner';
import { gameBySlug, type GameSlug } from '@/config/games';
import { RecentResults } from '@/features/bets/components/recent-results';
import { FairnessButton } from '@/features/fairness/components/fairness-button';
import { LiveBets } from '@/features/live/components/live-bets';
import { SessionStats } from '@/features/session-stats/components/session-stats';
import { TopUpOffer } from '@/features/wallet/components/top-up-offer';
import { useUser } from '@/lib/auth';
import styles from './game-screen.module.css';

/**
 * AfterFirstPaint renders its children once the browser is idle after the screen's first
 * paint (at the latest a second later), in a transition: the live stats and bets under the
 * game, below the fold on a phone, then neither add to the first render nor open the live
 * feed before the game can be played.
 */
function AfterFirstPaint({ children }: { children: ReactNode }) {
  const [ready, setReady] = useState(false);
  useEffect(() => {
    const show = () => {
      startTransition(() => {
        setReady(true);
      });
    };
    if (typeof window.requestIdleCallback === 'function') {
      const id = window.requestIdleCallback(show, { timeout: 1000 });
      return () => {
        window.cancelIdleCallback(id);
      };
    }
    const timer = window.setTimeout(show, 0);
    return () => {
      window.clearTimeout(timer);
    };
  }, []);
  return ready ? children : null;
}

/**
 * GameScreen puts a game in the common frame with the fairness panel's button, the
 * top-up offer and recent results over the stage, and the live stats and live bets
 * under the game. The game mounts once the player is known and starts afresh when the
 * account changes, so a running game is only ever resumed for its own player.
 */
export function GameScreen({ slug, game: Game }: { slug: GameSlug; game: ComponentType }) {
  const user = useUser();
  const userKey = user.data?._id ?? 'guest';
  // The game mounts in a transition once the player is known: React renders it in
  // slices, so a signed-in player's user answer does not start one long task.
  const pending = useDeferredValue(user.isPending);
  return (
    <GameFrame
      game={gameBySlug(slug)}
      actions={<FairnessButton />}
      stageTop={
        <>
          <TopUpOffer />
          <RecentResults key={userKey} game={slug} />
        </>
      }
      below={
        <AfterFirstPaint>
          <div className={styles.below}>
            <SessionStats game={slug} />
            {/* Once the player is known: keyed by the account, a table drawn before would open the
                floor's stream as a guest's, then close it and open another for the player. */}
            {user.isPending ? null : <LiveBets key={userKey} />}
          </div>
        </AfterFirstPaint>
      }
    >
      {pending ? <Spinner label="Loading the game" /> : <Game key={user.data?._id ?? 'guest'} />}
    </GameFrame>
  );
}
