import { PumpGame } from '@/features/pump/components/pump-game';
import { GameScreen } from './game-screen';

export default function PumpRoute() {
  return <GameScreen slug="pump" game={PumpGame} />;
}
