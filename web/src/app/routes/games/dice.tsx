import { GameFrame } from '@/components/layouts/game-frame';
import { gameBySlug } from '@/config/games';

const game = gameBySlug('dice');

export default function DiceRoute() {
  return <GameFrame game={game} />;
}
