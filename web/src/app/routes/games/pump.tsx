import { GameFrame } from '@/components/layouts/game-frame';
import { gameBySlug } from '@/config/games';

const game = gameBySlug('pump');

export default function PumpRoute() {
  return <GameFrame game={game} />;
}
