import { MinesGame } from '@/features/mines/components/mines-game';
import { GameScreen } from './game-screen';

export default function MinesRoute() {
  return <GameScreen slug="mines" game={MinesGame} />;
}
