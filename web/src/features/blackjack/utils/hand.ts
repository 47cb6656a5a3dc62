import type { CardSchema } from '@/gen/fairplay/v1/game_pb';
import type { ApiJson } from '@/lib/api-types';

// Blackjack hands as the screen shows them (SPEC.md §2, §4).

/** Card is a card as /api sends it; the dealer's face-down card is exactly {"hidden": true}. */
export type Card = ApiJson<typeof CardSchema>;

/** The deal shows dealer, player, dealer, player 250 ms apart; the dealer's draws follow 600 ms, then 400 ms apart. */
export const DEAL_STEP_MS = 250;
export const DEALER_REVEAL_DELAY_MS = 600;
export const DEALER_CARD_MS = 400;

/**
 * handTotal sums the visible cards' numericValue, counting aces 11 and taking 10 off
 * for each ace while the total is over 21. Hidden cards count nothing.
 */
export function handTotal(cards: readonly Card[]): number {
  let total = 0;
  let aces = 0;
  for (const card of cards) {
    if (card.hidden || card.numericValue === undefined) continue;
    total += card.numericValue;
    if (card.numericValue === 11) aces++;
  }
  while (total > 21 && aces > 0) {
    total -= 10;
    aces--;
  }
  return total;
}

const SUITS: Record<string, { symbol: string; red: boolean }> = {
  hearts: { symbol: '♥', red: true },
  diamonds: { symbol: '♦', red: true },
  spades: { symbol: '♠', red: false },
  clubs: { symbol: '♣', red: false },
};

/** suitOf gives a suit's symbol and whether it is drawn red (hearts and diamonds) or black. */
export function suitOf(suit: string | undefined): { symbol: string; red: boolean } {
  return (suit ? SUITS[suit] : undefined) ?? { symbol: '?', red: false };
}

/** cardName reads a card for assistive technology: "10 of hearts", or "Hidden card". */
export function cardName(card: Card): string {
  if (card.hidden) return 'Hidden card';
  const ranks: Record<string, string> = { A: 'Ace', K: 'King', Q: 'Queen', J: 'Jack' };
  const value = card.value ?? '?';
  return `${ranks[value] ?? value} of ${card.suit ?? 'unknown suit'}`;
}

export type ResultTone = 'win' | 'push' | 'loss';

/** resultTone colours the result banner: green with "You win", blue with "Push", red otherwise. */
export function resultTone(result: string): ResultTone {
  if (result.includes('You win')) return 'win';
  if (result.includes('Push')) return 'push';
  return 'loss';
}

/** canDoubleDown: only right after the deal, with exactly two cards, when the balance at the deal covered a second bet. */
export function canDoubleDown({
  cards,
  balanceAtDeal,
  stake,
}: {
  cards: number;
  balanceAtDeal: number;
  stake: number;
}): boolean {
  return cards === 2 && balanceAtDeal >= stake;
}
