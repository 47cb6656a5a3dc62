import { PlinkoGame } from '@/features/plinko/components/plinko-game';
import { GameScreen } from './game-screen';

export default function PlinkoRoute() {
  return <GameScreen slug="plinko" game={PlinkoGame} />;
}
