import type { ComponentType } from 'react';
import { GameFrame } from '@/components/layouts/game-frame';
import { Spinner } from '@/components/ui/spinner';
import { gameBySlug, type GameSlug } from '@/config/games';
import { FairnessButton } from '@/features/fairness/components/fairness-button';
import { useUser } from '@/lib/auth';

/**
 * GameScreen puts a game in the common frame with the fairness panel's button. The game
 * mounts once the player is known and starts afresh when the account changes, so a
 * running game is only ever resumed for its own player.
 */
export function GameScreen({ slug, game: Game }: { slug: GameSlug; game: ComponentType }) {
  const user = useUser();
  return (
    <GameFrame game={gameBySlug(slug)} actions={<FairnessButton />}>
      {user.isPending ? <Spinner label="Loading the game" /> : <Game key={user.data?._id ?? 'guest'} />}
    </GameFrame>
  );
}
