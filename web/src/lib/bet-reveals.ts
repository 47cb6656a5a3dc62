// Bet reveals: the header balance and the reveals of lib/reveals.ts follow what
// the player has seen, not what the server has answered.
//
// A response carries the balance after the bet, win included, while the game
// still animates the outcome (a Plinko ball falling, Keno numbers flipping, the
// dealer's cards turning over). Showing that balance at once gives the result
// away, so each game records its responses here when they arrive and reveals
// each one when its animation shows the result.
//
// The balance shown is the newest balance the server sent (newest by arrival),
// minus the payouts of the bets it includes that the player has not seen yet.
// That is the balance after their stakes, which tells nothing about their
// outcomes: the stake leaves the balance at once, as at a real table, and the
// win joins it at the reveal. Several bets can be in flight at once (Plinko
// balls), and an older response never overwrites a newer one.
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo } from 'react';
import type { GameSlug } from '@/config/games';
import { setUserBalance } from './auth';
import { announceReveal, holdBet, type Reveal } from './reveals';

/** RevealFigures are a settled bet's figures as announceReveal takes them, without the game. */
export type RevealFigures = Omit<Reveal, 'at' | 'game'>;

/**
 * BalanceLedger orders the balances of arriving responses against the reveals
 * of their results. Tickets number the responses in order of arrival.
 */
export class BalanceLedger {
  private arrivals = 0;
  private latest: { ticket: number; balance: number } | null = null;
  /** hidden maps each unrevealed ticket to the payout it holds back. */
  private hidden = new Map<number, number>();

  /**
   * arrive records a response: the balance it reports (undefined when it carries
   * none) and the payout to hold back until its reveal (0 when nothing is hidden).
   * It returns the response's ticket.
   */
  arrive(newBalance: number | undefined, hiddenPayout: number): number {
    const ticket = ++this.arrivals;
    if (typeof newBalance === 'number' && Number.isFinite(newBalance)) this.latest = { ticket, balance: newBalance };
    if (hiddenPayout !== 0) this.hidden.set(ticket, hiddenPayout);
    return ticket;
  }

  /** reveal releases a ticket's payout; it reports whether the ticket was still hidden. */
  reveal(ticket: number): boolean {
    return this.hidden.delete(ticket);
  }

  /** isHidden tells whether a ticket's payout is still held back. */
  isHidden(ticket: number): boolean {
    return this.hidden.has(ticket);
  }

  /**
   * shown is the balance to show: the newest balance minus the hidden payouts it
   * includes (those of tickets that arrived no later than it); null before any
   * response carried a balance.
   */
  shown(): number | null {
    if (!this.latest) return null;
    let balance = this.latest.balance;
    for (const [ticket, payout] of this.hidden) {
      if (ticket <= this.latest.ticket) balance -= payout;
    }
    // Whole cents, as every amount the server sends.
    return Math.round(balance * 100) / 100;
  }
}

/** Arrival is one response as it arrives. */
export interface Arrival {
  /** newBalance is the balance the response reports; undefined when it carries none (a Pump burst may not). */
  newBalance?: number;
  /**
   * settles holds the figures of the bet this response settles, announced at
   * its reveal; without it the response settles nothing (a game's start, a
   * safe tile) and its balance shows at once.
   */
  settles?: RevealFigures;
}

/** BetReveals is a game screen's side of the protocol. */
export interface BetReveals {
  /** arrive records a response when it arrives and returns its ticket for reveal. */
  arrive: (arrival: Arrival) => number;
  /** reveal is called when the animation shows the ticket's result: the balance catches up and the bet is announced once. */
  reveal: (ticket: number) => void;
  /** revealAll reveals every response still hidden, e.g. when the balls in flight are cleared. */
  revealAll: () => void;
}

/**
 * useBetReveals gives a game screen its BetReveals. Responses still hidden when
 * the screen goes away are revealed then, so a player who leaves mid-animation
 * ends with the right balance and every settled bet is announced exactly once.
 */
export function useBetReveals(game: GameSlug): BetReveals {
  const queryClient = useQueryClient();
  // One ledger per screen: game and queryClient never change while it is open.
  const api = useMemo<BetReveals>(() => {
    const ledger = new BalanceLedger();
    const pending = new Map<number, RevealFigures>();
    const show = () => {
      const balance = ledger.shown();
      if (balance !== null) setUserBalance(queryClient, balance);
    };
    const reveal = (ticket: number) => {
      ledger.reveal(ticket);
      const figures = pending.get(ticket);
      pending.delete(ticket);
      show();
      if (figures) announceReveal({ game, ...figures });
    };
    return {
      arrive({ newBalance, settles }) {
        const ticket = ledger.arrive(newBalance, settles?.payout ?? 0);
        if (settles) {
          pending.set(ticket, settles);
          holdBet(settles.betId);
        }
        show();
        return ticket;
      },
      reveal,
      revealAll() {
        for (const ticket of [...pending.keys()].sort((a, b) => a - b)) reveal(ticket);
      },
    };
  }, [game, queryClient]);

  useEffect(
    () => () => {
      api.revealAll();
    },
    [api],
  );

  return api;
}
