import type { ComponentType } from 'react';
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
 * GameScreen puts a game in the common frame with the fairness panel's button, the
 * top-up offer and recent results over the stage, and the live stats and live bets
 * under the game. The game mounts once the player is known and starts afresh when the
 * account changes, so a running game is only ever resumed for its own player.
 */
export function GameScreen({ slug, game: Game }: { slug: GameSlug; game: ComponentType }) {
  const user = useUser();
  const userKey = user.data?._id ?? 'guest';
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
        <div className={styles.below}>
          <SessionStats game={slug} />
          <LiveBets key={userKey} />
        </div>
      }
    >
      {user.isPending ? <Spinner label="Loading the game" /> : <Game key={user.data?._id ?? 'guest'} />}
    </GameFrame>
  );
}
