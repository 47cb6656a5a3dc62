import { GameFrame } from '@/components/layouts/game-frame';
import { gameBySlug } from '@/config/games';

const game = gameBySlug('plinko');

export default function PlinkoRoute() {
  return <GameFrame game={game} />;
}
