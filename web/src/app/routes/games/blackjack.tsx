import { BlackjackGame } from '@/features/blackjack/components/blackjack-game';
import { GameScreen } from './game-screen';

export default function BlackjackRoute() {
  return <GameScreen slug="blackjack" game={BlackjackGame} />;
}
