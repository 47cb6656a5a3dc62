// The autobet engine: pure rules, no React. Every amount is in integer cents, so
// 1,000 bets never drift the way repeated float arithmetic does; the UI turns
// cents back into the dollars lib/bet sends (cents / 100 is exact to the cent).
//
// Rules (the text the Auto tab shows under its fields says the same):
// - A bet wins when its payout is above its stake; anything else (a push, a
//   Plinko 0.5x) is a loss.
// - On win / on loss: "reset" goes back to the base bet, "increase" multiplies
//   the current bet by (1 + percent / 100), rounded to the nearest cent, halves
//   up. The percent has at most two decimals (0 to 1,000).
// - After each settled bet the engine stops, in this order, when: the single win
//   limit is passed (payout strictly above it), the net profit reaches the stop
//   on profit (net ≥ limit), the net loss reaches the stop on loss (−net ≥
//   limit), or the number of bets is reached. 0 bets means no count limit.
// - Before each bet it stops when the next bet is above the balance.
// A refusal from the server stops it too (the hook reports the server's text).

import { formatMoney } from '@/lib/format';

export type OnResult = { mode: 'reset' } | { mode: 'increase'; percent: number };

export interface AutobetSettings {
  /** bets is the number of bets to place; 0 is no limit (until a stop rule or Stop). */
  bets: number;
  onWin: OnResult;
  onLoss: OnResult;
  /** stopProfit stops once the net profit reaches it (dollars); 0 is off. */
  stopProfit: number;
  /** stopLoss stops once the net loss reaches it (dollars); 0 is off. */
  stopLoss: number;
  /** stopWinAbove stops after a single win whose payout is above it (dollars); 0 is off. */
  stopWinAbove: number;
}

export const DEFAULT_AUTOBET: AutobetSettings = {
  bets: 10,
  onWin: { mode: 'reset' },
  onLoss: { mode: 'reset' },
  stopProfit: 0,
  stopLoss: 0,
  stopWinAbove: 0,
};

export const MAX_BETS = 100_000;
export const MAX_PERCENT = 1000;

export type StopReason =
  | { kind: 'count'; count: number }
  | { kind: 'profit'; net: number }
  | { kind: 'loss'; net: number }
  | { kind: 'lossAhead'; bet: number; net: number }
  | { kind: 'singleWin'; payout: number }
  | { kind: 'balance'; bet: number }
  | { kind: 'refused'; message: string }
  | { kind: 'stopped' };

export interface AutobetState {
  /** baseCents is the bet the run started with; "reset" returns to it. */
  baseCents: number;
  /** betCents is the next bet. */
  betCents: number;
  count: number;
  /** netCents is the sum of payouts minus stakes so far. */
  netCents: number;
  wins: number;
  losses: number;
}

export interface Settled {
  stakeCents: number;
  payoutCents: number;
}

/** toCents turns a dollar amount into whole cents (nearest cent). */
export function toCents(amount: number): number {
  return Math.round(amount * 100);
}

/** fromCents is the dollar amount of whole cents, exact to the cent. */
export function fromCents(cents: number): number {
  return cents / 100;
}

/** increaseCents is cents × (1 + percent/100) to the nearest cent, halves up, in integer arithmetic. */
export function increaseCents(cents: number, percent: number): number {
  const bp = Math.round(percent * 100); // hundredths of a percent
  return Math.floor((cents * (10_000 + bp) + 5_000) / 10_000);
}

export function startState(baseAmount: number): AutobetState {
  const baseCents = toCents(baseAmount);
  return { baseCents, betCents: baseCents, count: 0, netCents: 0, wins: 0, losses: 0 };
}

/**
 * beforeBet is the stop reason that forbids the next bet, or null: it is above the balance, or, lost, it would take
 * the net loss past the stop on loss (RTS 8: autoplay never loses more than the limit the player set, so a raised
 * bet that could pass it is not placed).
 */
export function beforeBet(settings: AutobetSettings, state: AutobetState, balance: number): StopReason | null {
  if (state.betCents > toCents(balance)) return { kind: 'balance', bet: fromCents(state.betCents) };
  const loss = toCents(settings.stopLoss);
  if (loss > 0 && state.betCents - state.netCents > loss)
    return { kind: 'lossAhead', bet: fromCents(state.betCents), net: fromCents(state.netCents) };
  return null;
}

export interface Step {
  state: AutobetState;
  stop: StopReason | null;
}

/** settle records a settled bet and returns the next state (its next bet) and the rule that stops the run, if any. */
export function settle(settings: AutobetSettings, state: AutobetState, bet: Settled): Step {
  const won = bet.payoutCents > bet.stakeCents;
  const netCents = state.netCents + bet.payoutCents - bet.stakeCents;
  const rule = won ? settings.onWin : settings.onLoss;
  const betCents = rule.mode === 'reset' ? state.baseCents : increaseCents(bet.stakeCents, rule.percent);
  const next: AutobetState = {
    baseCents: state.baseCents,
    betCents,
    count: state.count + 1,
    netCents,
    wins: state.wins + (won ? 1 : 0),
    losses: state.losses + (won ? 0 : 1),
  };
  let stop: StopReason | null = null;
  const winAbove = toCents(settings.stopWinAbove);
  const profit = toCents(settings.stopProfit);
  const loss = toCents(settings.stopLoss);
  if (winAbove > 0 && won && bet.payoutCents > winAbove)
    stop = { kind: 'singleWin', payout: fromCents(bet.payoutCents) };
  else if (profit > 0 && netCents >= profit) stop = { kind: 'profit', net: fromCents(netCents) };
  else if (loss > 0 && -netCents >= loss) stop = { kind: 'loss', net: fromCents(netCents) };
  else if (settings.bets > 0 && next.count >= settings.bets) stop = { kind: 'count', count: next.count };
  return { state: next, stop };
}

const money = formatMoney;

/** stopMessage is what the Auto tab says when a run ends. */
export function stopMessage(reason: StopReason): string {
  switch (reason.kind) {
    case 'count':
      return `Autobet finished: ${String(reason.count)} bets placed.`;
    case 'profit':
      return `Autobet stopped: net profit ${money(reason.net)} reached the stop on profit.`;
    case 'loss':
      return `Autobet stopped: net loss ${money(-reason.net)} reached the stop on loss.`;
    case 'lossAhead':
      return `Autobet stopped: the next bet (${money(reason.bet)}) could take the net loss past the stop on loss.`;
    case 'singleWin':
      return `Autobet stopped: a single win of ${money(reason.payout)} is above the limit.`;
    case 'balance':
      return `Autobet stopped: the next bet (${money(reason.bet)}) is above your balance.`;
    case 'refused':
      return `Autobet stopped: ${reason.message}`;
    case 'stopped':
      return 'Autobet stopped.';
  }
}

function amount(value: unknown, max = 1e9): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= max ? value : null;
}

function onResult(value: unknown): OnResult | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as { mode?: unknown; percent?: unknown };
  if (v.mode === 'reset') return { mode: 'reset' };
  if (v.mode === 'increase') {
    const percent = amount(v.percent, MAX_PERCENT);
    return percent === null ? null : { mode: 'increase', percent: Math.round(percent * 100) / 100 };
  }
  return null;
}

/** parseSettings validates stored settings; anything invalid falls back to the default, field by field. */
export function parseSettings(value: unknown): AutobetSettings {
  if (typeof value !== 'object' || value === null) return DEFAULT_AUTOBET;
  const v = value as Record<string, unknown>;
  const bets = amount(v.bets, MAX_BETS);
  return {
    bets: bets !== null && Number.isInteger(bets) ? bets : DEFAULT_AUTOBET.bets,
    onWin: onResult(v.onWin) ?? DEFAULT_AUTOBET.onWin,
    onLoss: onResult(v.onLoss) ?? DEFAULT_AUTOBET.onLoss,
    stopProfit: amount(v.stopProfit) ?? 0,
    stopLoss: amount(v.stopLoss) ?? 0,
    stopWinAbove: amount(v.stopWinAbove) ?? 0,
  };
}

const storageKey = (game: string) => `fairplay.autobet.${game}`;

export function loadSettings(game: string): AutobetSettings {
  try {
    const raw = window.localStorage.getItem(storageKey(game));
    return raw === null ? DEFAULT_AUTOBET : parseSettings(JSON.parse(raw));
  } catch {
    return DEFAULT_AUTOBET;
  }
}

export function saveSettings(game: string, settings: AutobetSettings): void {
  try {
    window.localStorage.setItem(storageKey(game), JSON.stringify(settings));
  } catch {
    // Storage full or blocked: the settings last for this page only.
  }
}
