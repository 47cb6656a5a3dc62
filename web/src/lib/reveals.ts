// Reveals: the moment a game's animation shows a settled result to the player.
//
// A response arrives before the player has seen what it holds (the Plinko ball
// is still falling, the Keno numbers still flipping, the dealer's hole card
// still face down). Everything that would give the result away (the header
// balance, the recent results strip, the session stats, the player's own row
// in the live bets table) waits for the game to announce the reveal here.
//
// The protocol, per bet:
//   1. when the response arrives, the game calls holdBet(betId): the live
//      table keeps that bet back if the floor's stream brings it first;
//   2. when the animation shows the result, the game calls announceReveal()
//      with the settled figures: subscribers update and the hold is released.
import { useSyncExternalStore } from 'react';
import type { GameSlug } from '@/config/games';

/** Reveal is one settled bet as its player has just seen it. */
export interface Reveal {
  game: GameSlug;
  betId: string;
  /** amount is the total stake. */
  amount: number;
  /** multiplier is the payout multiplier (0 for a loss). */
  multiplier: number;
  /** payout is the amount credited. */
  payout: number;
  /** at is the time of the reveal (ms since the epoch). */
  at: number;
}

type Listener = () => void;

const MAX_KEPT = 200;
let reveals: readonly Reveal[] = [];
const held = new Set<string>();
const listeners = new Set<Listener>();

function emit(): void {
  for (const l of listeners) l();
}

/** holdBet marks a bet whose result the player has not seen yet. */
export function holdBet(betId: string): void {
  if (!betId || held.has(betId)) return;
  held.add(betId);
  emit();
}

/** isHeld tells whether a bet's result is still hidden from its player. */
export function isHeld(betId: string): boolean {
  return held.has(betId);
}

/** announceReveal records that the player has now seen a settled bet. */
export function announceReveal(reveal: Omit<Reveal, 'at'> & { at?: number }): void {
  held.delete(reveal.betId);
  const r: Reveal = { ...reveal, at: reveal.at ?? Date.now() };
  reveals = [r, ...reveals].slice(0, MAX_KEPT);
  emit();
}

/** subscribeReveals calls listener after every hold and reveal; it returns the unsubscribe function. */
export function subscribeReveals(listener: Listener): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/** revealsSnapshot is every reveal since the page opened, newest first (at most 200). */
export function revealsSnapshot(): readonly Reveal[] {
  return reveals;
}

/** useReveals returns the reveals since the page opened, newest first. */
export function useReveals(): readonly Reveal[] {
  return useSyncExternalStore(subscribeReveals, revealsSnapshot, revealsSnapshot);
}

/** resetReveals forgets every reveal and hold (tests, and sign-out). */
export function resetReveals(): void {
  reveals = [];
  held.clear();
  emit();
}
