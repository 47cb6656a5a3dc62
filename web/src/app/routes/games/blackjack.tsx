import { GameFrame } from '@/components/layouts/game-frame';
import { gameBySlug } from '@/config/games';

const game = gameBySlug('blackjack');

export default function BlackjackRoute() {
  return <GameFrame game={game} />;
}
