import { GameFrame } from '@/components/layouts/game-frame';
import { gameBySlug } from '@/config/games';

const game = gameBySlug('keno');

export default function KenoRoute() {
  return <GameFrame game={game} />;
}
