import type { LiveBet } from '../api/watch-bets';

export interface LiveFeedOptions {
  /** max is how many rows the table keeps. */
  max: number;
  /** mustWait tells a bet whose result its own player has not seen yet (it waits off the table). */
  mustWait: (bet: LiveBet) => boolean;
  /** maxWaitMs bounds a wait: a game left before its animation ended never announces its reveal. */
  maxWaitMs: number;
  now: () => number;
}

/**
 * LiveFeed is the live table's rows, newest first, with the bets kept back for their
 * reveal. A bet that must wait is shown when it no longer must (its game announced the
 * reveal) or when it has waited maxWaitMs, at the top, as the floor sees it happen.
 */
export class LiveFeed {
  rows: readonly LiveBet[] = [];
  private waiting: { bet: LiveBet; since: number }[] = [];
  private readonly opts: LiveFeedOptions;

  constructor(opts: LiveFeedOptions) {
    this.opts = opts;
  }

  /** waitingCount is how many bets are kept back. */
  get waitingCount(): number {
    return this.waiting.length;
  }

  private known(id: string): boolean {
    return this.rows.some((r) => r._id === id) || this.waiting.some((w) => w.bet._id === id);
  }

  private show(bets: LiveBet[]) {
    if (bets.length === 0) return;
    this.rows = [...bets.reverse(), ...this.rows].slice(0, this.opts.max);
  }

  /** add takes a batch from the stream (oldest first); it returns whether the rows changed. */
  add(batch: readonly LiveBet[]): boolean {
    const now = this.opts.now();
    const shown: LiveBet[] = [];
    for (const bet of batch) {
      if (this.known(bet._id) || shown.some((b) => b._id === bet._id)) continue;
      if (this.opts.mustWait(bet)) this.waiting.push({ bet, since: now });
      else shown.push(bet);
    }
    // The waiting list is bounded like the table: the oldest waiting bet is shown, not kept.
    while (this.waiting.length > this.opts.max) {
      const oldest = this.waiting.shift();
      if (oldest) shown.unshift(oldest.bet);
    }
    this.show(shown);
    return shown.length > 0;
  }

  /** release shows the waiting bets that may now be seen; it returns whether the rows changed. */
  release(): boolean {
    const now = this.opts.now();
    const ready: LiveBet[] = [];
    this.waiting = this.waiting.filter((w) => {
      const go = !this.opts.mustWait(w.bet) || now - w.since >= this.opts.maxWaitMs;
      if (go) ready.push(w.bet);
      return !go;
    });
    this.show(ready);
    return ready.length > 0;
  }
}
