import { GameFrame } from '@/components/layouts/game-frame';
import { gameBySlug } from '@/config/games';

const game = gameBySlug('mines');

export default function MinesRoute() {
  return <GameFrame game={game} />;
}
