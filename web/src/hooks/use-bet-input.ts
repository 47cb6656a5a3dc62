import { useState } from 'react';
import { useUser } from '@/lib/auth';
import { BET_DEFAULT, formatBetInput, parseBetAmount, PLAY_MESSAGES, playError } from '@/lib/bet';
import { toast } from '@/lib/toast';

export interface BetChecks {
  /** picks is the number of selected Keno numbers; other games leave it out. */
  picks?: number;
  /** signInOnly checks only that the player is signed in (Plinko, SPEC.md §5). */
  signInOnly?: boolean;
}

/**
 * useBetInput is the bet amount of a game screen: the field's text and takeBet,
 * which every screen calls as it submits. takeBet parses the amount and returns
 * it, or shows the first client message that forbids the bet (SPEC.md §5's
 * order, lib/bet's playError) and returns null; nothing is sent then.
 */
export function useBetInput() {
  const user = useUser().data;
  const [betText, setBetText] = useState(formatBetInput(BET_DEFAULT));
  const takeBet = ({ picks, signInOnly = false }: BetChecks = {}): number | null => {
    const bet = parseBetAmount(betText);
    const problem = signInOnly
      ? user
        ? null
        : PLAY_MESSAGES.login
      : playError({ signedIn: Boolean(user), bet, balance: user?.balance ?? 0, picks });
    if (problem) {
      toast.error(problem);
      return null;
    }
    return bet;
  };
  return { user, betText, setBetText, takeBet };
}
