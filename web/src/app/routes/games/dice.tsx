import { DiceGame } from '@/features/dice/components/dice-game';
import { GameScreen } from './game-screen';

export default function DiceRoute() {
  return <GameScreen slug="dice" game={DiceGame} />;
}
