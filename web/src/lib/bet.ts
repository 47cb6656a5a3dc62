// The bet amount every game shares (SPEC.md §5, §9): the input's limits, how its text
// reads, the halve and double buttons, and the client checks made before a bet is sent.

export const BET_MIN = 0.1;
export const BET_STEP = 0.1;
export const BET_DEFAULT = 1;

/** The client's validation messages (SPEC.md §5, §8). */
export const PLAY_MESSAGES = {
  login: 'Please login to play',
  noNumbers: 'Please select at least one number',
  invalidBet: 'Please enter a valid bet amount',
  insufficient: 'Insufficient balance',
  insufficientDouble: 'Insufficient balance to double down',
} as const;

/** The server's generic failure text, which Dice, Mines, Keno and Blackjack show for any failed call. */
export const GENERIC_ERROR = 'Something went wrong. Please try again.';

/** parseBetAmount reads the bet input's text; anything that is not a number is 0. */
export function parseBetAmount(text: string): number {
  const value = Number.parseFloat(text);
  return Number.isFinite(value) ? value : 0;
}

// Stakes carry at most 8 decimals on the server; halving stays within them.
function roundStake(value: number): number {
  return Math.round(value * 1e8) / 1e8;
}

/** halveBet halves a stake, with no floor (0.1 → 0.05). */
export function halveBet(amount: number): number {
  return roundStake(amount / 2);
}

/** doubleBet doubles a stake, with no ceiling but the balance check at play time. */
export function doubleBet(amount: number): number {
  return roundStake(amount * 2);
}

/** formatBetInput is the input text for a stake: 0.05 → "0.05", 2 → "2". */
export function formatBetInput(amount: number): string {
  return String(amount);
}

export interface PlayCheck {
  signedIn: boolean;
  bet: number;
  /** balance is the signed-in player's balance (ignored for guests). */
  balance: number;
  /** picks is the number of selected Keno numbers; other games leave it out. */
  picks?: number;
}

/**
 * playError returns the first client message that forbids the bet, in SPEC.md §5's
 * order (logged in, Keno numbers, a bet above 0, enough balance), or null.
 */
export function playError({ signedIn, bet, balance, picks }: PlayCheck): string | null {
  if (!signedIn) return PLAY_MESSAGES.login;
  if (picks !== undefined && picks < 1) return PLAY_MESSAGES.noNumbers;
  if (!(bet > 0)) return PLAY_MESSAGES.invalidBet;
  if (balance < bet) return PLAY_MESSAGES.insufficient;
  return null;
}
