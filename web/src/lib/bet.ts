import { ApiError } from './api-client';

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
  insufficientSplit: 'Insufficient balance to split',
  insufficientInsurance: 'Insufficient balance for insurance',
} as const;

/** The server's generic failure text, which Dice, Mines, Keno and Blackjack show for any failed call. */
export const GENERIC_ERROR = 'Something went wrong. Please try again.';

/**
 * betRefusal is the server's message when it refused a bet as invalid (400: below the minimum bet, above the
 * maximum, fractions of a cent, insufficient balance), so a halved stake under the minimum says why; null for any
 * other failure, which keeps SPEC.md §8's generic handling.
 */
export function betRefusal(err: unknown): string | null {
  return err instanceof ApiError && err.status === 400 && err.serverMessage ? err.serverMessage : null;
}

/** parseBetAmount reads the bet input's text; anything that is not a number is 0. */
export function parseBetAmount(text: string): number {
  const value = Number.parseFloat(text);
  return Number.isFinite(value) ? value : 0;
}

// Stakes are whole cents on the server (like every amount the UI shows):
// halving rounds down to a cent, doubling stays exact.
function roundStake(value: number): number {
  return Math.floor(Math.round(value * 1e6) / 1e4) / 100;
}

/** halveBet halves a stake to whole cents, with no floor (0.1 → 0.05, 0.05 → 0.02); the server refuses a stake below its minimum with its own message. */
export function halveBet(amount: number): number {
  return roundStake(amount / 2);
}

/** doubleBet doubles a stake, with no ceiling but the balance check at play time. */
export function doubleBet(amount: number): number {
  return roundStake(amount * 2);
}

/**
 * formatBetInput is the input text for a stake, in whole cents with at most two
 * decimals and no trailing zeros: 0.05 → "0.05", 2 → "2", 0.1 + 0.2 → "0.3".
 * A float's long tail (0.30000000000000004) never reaches the field.
 */
export function formatBetInput(amount: number): string {
  if (!Number.isFinite(amount)) return '0';
  return (Math.round(amount * 100) / 100).toFixed(2).replace(/\.?0+$/, '');
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
