import { KenoGame } from '@/features/keno/components/keno-game';
import { GameScreen } from './game-screen';

export default function KenoRoute() {
  return <GameScreen slug="keno" game={KenoGame} />;
}
