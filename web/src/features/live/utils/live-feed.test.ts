import type { LiveBet } from '../api/watch-bets';
import { LiveFeed } from './live-feed';

function bet(id: string, username = 'bob'): LiveBet {
  return {
    _id: id,
    game: 'dice',
    username,
    hidden: false,
    amount: 1,
    multiplier: 2,
    payout: 2,
    settledAt: '2026-11-24T05:00:00Z',
  };
}

function setup(max = 3) {
  const waiting = new Set<string>();
  let now = 0;
  const feed = new LiveFeed({
    max,
    maxWaitMs: 1000,
    now: () => now,
    mustWait: (b) => waiting.has(b._id),
  });
  return {
    feed,
    waiting,
    tick: (ms: number) => {
      now += ms;
    },
    ids: () => feed.rows.map((r) => r._id),
  };
}

describe('LiveFeed', () => {
  it('shows a batch newest first and keeps the latest max rows', () => {
    const { feed, ids } = setup(3);
    expect(feed.add([bet('a'), bet('b')])).toBe(true);
    expect(ids()).toEqual(['b', 'a']);
    feed.add([bet('c'), bet('d')]);
    expect(ids()).toEqual(['d', 'c', 'b']);
  });

  it('ignores a bet it already has', () => {
    const { feed, ids } = setup();
    feed.add([bet('a')]);
    expect(feed.add([bet('a'), bet('a')])).toBe(false);
    expect(ids()).toEqual(['a']);
  });

  it('keeps a bet back while it must wait, then shows it at the top', () => {
    const { feed, waiting, ids } = setup();
    waiting.add('mine');
    feed.add([bet('mine'), bet('x')]);
    expect(ids()).toEqual(['x']);
    expect(feed.waitingCount).toBe(1);
    feed.add([bet('mine')]);
    expect(feed.release()).toBe(false);
    expect(ids()).toEqual(['x']);
    waiting.delete('mine');
    expect(feed.release()).toBe(true);
    expect(ids()).toEqual(['mine', 'x']);
    expect(feed.waitingCount).toBe(0);
  });

  it('shows a waiting bet after the longest wait', () => {
    const { feed, waiting, tick, ids } = setup();
    waiting.add('mine');
    feed.add([bet('mine')]);
    tick(999);
    feed.release();
    expect(ids()).toEqual([]);
    tick(1);
    feed.release();
    expect(ids()).toEqual(['mine']);
  });

  it('bounds the waiting list like the table', () => {
    const { feed, waiting, ids } = setup(2);
    for (const id of ['w1', 'w2', 'w3']) waiting.add(id);
    feed.add([bet('w1'), bet('w2'), bet('w3')]);
    expect(feed.waitingCount).toBe(2);
    expect(ids()).toEqual(['w1']);
  });
});
