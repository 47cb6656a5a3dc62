import { useInfiniteQuery } from '@tanstack/react-query';
import { useEffect, useRef, type ReactNode } from 'react';
import { useSearchParams } from 'react-router';
import { BetDetails } from '@/components/bets/bet-details';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent } from '@/components/ui/dialog';
import { SelectField } from '@/components/ui/select-field';
import { Spinner } from '@/components/ui/spinner';
import { GAMES, type GameSlug } from '@/config/games';
import { errorMessage } from '@/lib/api-client';
import { formatBetTime, gameTitle } from '@/lib/bets/bet-format';
import { betHistoryQueryOptions, type Bet } from '@/lib/bets/get-bets';
import { formatMoney, formatMultiplier } from '@/lib/format';
import styles from './bets.module.css';

type GameFilter = GameSlug | 'all';

const FILTER_OPTIONS: { value: GameFilter; label: string }[] = [
  { value: 'all', label: 'All games' },
  ...GAMES.map((g) => ({ value: g.slug, label: g.title })),
];

/** parseGame reads the ?game= filter; anything but a game's slug means every game. */
export function parseGame(value: string | null): GameSlug | undefined {
  return GAMES.find((g) => g.slug === value)?.slug;
}

function BetRow({ bet, onOpen }: { bet: Bet; onOpen: (id: string) => void }) {
  const running = bet.status === 'active';
  const time = formatBetTime(bet.createdAt);
  const won = !running && bet.payout > 0;
  return (
    <tr>
      <td>
        <button
          type="button"
          className={styles.open}
          // The name starts with the visible text, and says which bet it opens.
          aria-label={`${gameTitle(bet.game)} bet, ${time}`}
          onClick={() => {
            onOpen(bet._id);
          }}
        >
          {gameTitle(bet.game)}
        </button>
        <span className={styles.narrowTime} aria-hidden="true">
          {time}
        </span>
      </td>
      <td className={styles.time}>{time}</td>
      <td className={styles.num}>{formatMoney(bet.amount)}</td>
      <td className={styles.num}>{running ? 'running' : formatMultiplier(bet.multiplier)}</td>
      <td className={`${styles.num} ${won ? styles.win : ''}`}>{running ? '—' : formatMoney(bet.payout)}</td>
    </tr>
  );
}

/**
 * useLoadOnSight calls load when the sentinel scrolls into view (where the browser can tell).
 * A new round (each loaded page) observes afresh, so a sentinel still in view loads the next one.
 */
function useLoadOnSight(load: () => void, active: boolean, round: number) {
  const sentinel = useRef<HTMLDivElement>(null);
  const loadRef = useRef(load);
  useEffect(() => {
    loadRef.current = load;
  });
  useEffect(() => {
    const node = sentinel.current;
    if (!active || !node || typeof IntersectionObserver === 'undefined') return;
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) loadRef.current();
      },
      { rootMargin: '200px' },
    );
    observer.observe(node);
    return () => {
      observer.disconnect();
    };
  }, [active, round]);
  return sentinel;
}

export interface BetHistoryProps {
  /** revealAction lets the details of a bet whose seed is still secret reveal it in one click. */
  revealAction?: ReactNode;
}

/**
 * BetHistory is the My Bets page: the player's bets, newest first, filtered by game
 * (?game=), loading more as the list scrolls; a bet opens its details, fairness data and
 * verification in a dialog that has its own address (?bet=<id>).
 */
export function BetHistory({ revealAction }: BetHistoryProps) {
  const [params, setParams] = useSearchParams();
  const game = parseGame(params.get('game'));
  const betId = params.get('bet');
  const history = useInfiniteQuery(betHistoryQueryOptions(game));
  const { fetchNextPage, hasNextPage, isFetchingNextPage } = history;
  const sentinel = useLoadOnSight(
    () => {
      if (hasNextPage && !isFetchingNextPage) void fetchNextPage();
    },
    hasNextPage,
    history.data?.pages.length ?? 0,
  );

  const update = (next: { game?: GameSlug | undefined; bet?: string | null }) => {
    const out = new URLSearchParams(params);
    if ('game' in next) {
      if (next.game) out.set('game', next.game);
      else out.delete('game');
    }
    if ('bet' in next) {
      if (next.bet) out.set('bet', next.bet);
      else out.delete('bet');
    }
    setParams(out, { replace: 'game' in next });
  };

  const bets = history.data?.pages.flatMap((p) => p.bets) ?? [];
  const title = game ? gameTitle(game) : '';

  return (
    <div className={styles.page}>
      <div className={styles.head}>
        <h1 className={styles.title}>My Bets</h1>
        <div className={styles.filter}>
          <SelectField<GameFilter>
            label="Game"
            options={FILTER_OPTIONS}
            value={game ?? 'all'}
            onChange={(value) => {
              update({ game: value === 'all' ? undefined : value });
            }}
          />
        </div>
      </div>
      {history.isPending ? (
        <Spinner label="Loading your bets" />
      ) : history.isError ? (
        <Alert>{errorMessage(history.error, 'Failed to load your bets')}</Alert>
      ) : bets.length === 0 ? (
        <p className={styles.muted}>{game ? `No ${title} bets yet.` : 'No bets yet.'} Place a bet to see it here.</p>
      ) : (
        <>
          <div className={styles.tableBox}>
            <table className={styles.table}>
              <caption className={styles.srOnly}>{game ? `Your ${title} bets` : 'Your bets'}, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Game</th>
                  <th scope="col" className={styles.time}>
                    Time
                  </th>
                  <th scope="col" className={styles.num}>
                    Bet
                  </th>
                  <th scope="col" className={styles.num}>
                    Multiplier
                  </th>
                  <th scope="col" className={styles.num}>
                    Payout
                  </th>
                </tr>
              </thead>
              <tbody>
                {bets.map((bet) => (
                  <BetRow
                    key={bet._id}
                    bet={bet}
                    onOpen={(id) => {
                      update({ bet: id });
                    }}
                  />
                ))}
              </tbody>
            </table>
          </div>
          <div ref={sentinel} className={styles.more}>
            {hasNextPage ? (
              <Button
                variant="secondary"
                size="sm"
                disabled={isFetchingNextPage}
                onClick={() => {
                  void fetchNextPage();
                }}
              >
                {isFetchingNextPage ? 'Loading…' : 'Load more'}
              </Button>
            ) : (
              <p
                className={styles.muted}
              >{`That's all: ${String(bets.length)} ${bets.length === 1 ? 'bet' : 'bets'}.`}</p>
            )}
          </div>
        </>
      )}
      {betId ? (
        <Dialog
          open
          onOpenChange={(open) => {
            if (!open) update({ bet: null });
          }}
        >
          <DialogContent title="Bet details" size="lg">
            <BetDetails betId={betId} revealAction={revealAction} />
          </DialogContent>
        </Dialog>
      ) : null}
    </div>
  );
}
