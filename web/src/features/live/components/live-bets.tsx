import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState } from 'react';
import { Link } from 'react-router';
import { Tabs, TabsContent, TabsList, TabsTrigger } from '@/components/ui/tabs';
import { GAMES } from '@/config/games';
import { userQueryKey, useUser, type User } from '@/lib/auth';
import { gameTitle } from '@/lib/bets/bet-format';
import { useRecentBets } from '@/lib/bets/get-bets';
import { isWin, recentOutcomes } from '@/lib/bets/recent';
import { formatMoney, formatMultiplier } from '@/lib/format';
import { isHeld, subscribeReveals, useReveals } from '@/lib/reveals';
import { liveBetsUrl, useLiveStream, type LiveBet, type StreamStatus } from '../api/watch-bets';
import { LiveFeed } from '../utils/live-feed';
import styles from './live-bets.module.css';

/** LIVE_ROWS is how many bets the table keeps, as Stake's does. */
export const LIVE_ROWS = 20;

/**
 * HIGH_ROLLER_MIN is the High rollers tab's smallest stake: 100, a tenth of a new account's
 * 1,000 and a hundred times the default 1.00 stake, so the tab shows deliberate big bets
 * rather than everyday play, yet still moves on a demo floor.
 */
export const HIGH_ROLLER_MIN = 100;

/** MAX_WAIT_MS bounds how long the player's own bet waits for its reveal (the longest animation is a few seconds). */
const MAX_WAIT_MS = 30_000;

/**
 * SETTLE_MS is how long after this tab's last request ended a bet that may be the player's
 * still waits: a game may hold its bet in a callback that runs just after the request is
 * marked done.
 */
const SETTLE_MS = 250;

interface Row {
  id: string;
  game: string;
  player: string;
  hidden: boolean;
  at: number;
  amount: number;
  multiplier: number;
  payout: number;
}

const timeFormat = new Intl.DateTimeFormat('en-US', { timeStyle: 'medium' });

function formatTime(ms: number): string {
  return Number.isFinite(ms) && ms > 0 ? timeFormat.format(new Date(ms)) : '';
}

function gamePath(game: string): string | undefined {
  return GAMES.find((g) => g.slug === game)?.path;
}

/** maybeMine tells a floor bet that could be the signed-in player's own (by name, or hidden when they hide theirs). */
function maybeMine(bet: LiveBet, user: User | null | undefined): boolean {
  if (!user) return false;
  return bet.hidden ? user.hideUsername : bet.username === user.username;
}

function LiveTable({ rows, empty, label }: { rows: readonly Row[]; empty: string; label: string }) {
  return (
    <div className={styles.tableBox}>
      <table className={styles.table} aria-label={label}>
        <thead>
          <tr>
            <th scope="col">Game</th>
            <th scope="col">Player</th>
            <th scope="col" className={styles.wide}>
              Time
            </th>
            <th scope="col" className={`${styles.num} ${styles.wide}`}>
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
          {rows.length === 0 ? (
            <tr>
              <td colSpan={6} className={styles.empty}>
                {empty}
              </td>
            </tr>
          ) : (
            rows.map((row) => {
              const path = gamePath(row.game);
              const win = isWin(row);
              return (
                <tr key={row.id}>
                  <td>{path ? <Link to={path}>{gameTitle(row.game)}</Link> : gameTitle(row.game)}</td>
                  <td className={row.hidden ? styles.hidden : undefined}>{row.hidden ? 'Hidden' : row.player}</td>
                  <td className={`${styles.time} ${styles.wide}`}>{formatTime(row.at)}</td>
                  <td className={`${styles.num} ${styles.wide}`}>{formatMoney(row.amount)}</td>
                  <td className={styles.num}>{formatMultiplier(row.multiplier)}</td>
                  <td className={`${styles.num} ${win ? styles.win : ''}`}>{formatMoney(row.payout)}</td>
                </tr>
              );
            })
          )}
        </tbody>
      </table>
    </div>
  );
}

function toRow(bet: LiveBet): Row {
  return {
    id: bet._id,
    game: bet.game,
    player: bet.username,
    hidden: bet.hidden,
    at: new Date(bet.settledAt).getTime(),
    amount: bet.amount,
    multiplier: bet.multiplier,
    payout: bet.payout,
  };
}

const STATUS_TEXT: Record<StreamStatus, string> = {
  connecting: 'Connecting…',
  open: 'Live',
  reconnecting: 'Reconnecting…',
  paused: 'Paused while the tab is hidden',
};

/**
 * FloorTab streams the floor's bets (every one, or the high rollers'). The player's own bet
 * waits off the table while its game still hides the result: when its id is held, and,
 * since the stream can beat the bet's own response, while one of this tab's requests is
 * under way (or just ended) and the bet could be theirs.
 */
function FloorTab({ minAmount, label }: { minAmount?: number; label: string }) {
  const queryClient = useQueryClient();
  // When this tab's requests last all ended (ms since the epoch).
  const [requests] = useState(() => ({ idleSince: 0 }));
  const [feed] = useState(
    () =>
      new LiveFeed({
        max: LIVE_ROWS,
        maxWaitMs: MAX_WAIT_MS,
        now: Date.now,
        mustWait: (bet) =>
          isHeld(bet._id) ||
          (maybeMine(bet, queryClient.getQueryData<User | null>(userQueryKey)) &&
            (queryClient.isMutating() > 0 || Date.now() - requests.idleSince < SETTLE_MS)),
      }),
  );
  const [rows, setRows] = useState<readonly LiveBet[]>([]);
  const waitTimer = useRef<ReturnType<typeof setTimeout>>(undefined);

  const status = useLiveStream(liveBetsUrl(minAmount), (bets) => {
    const changed = feed.add(bets);
    if (changed) setRows(feed.rows);
    if (feed.waitingCount > 0) {
      clearTimeout(waitTimer.current);
      waitTimer.current = setTimeout(() => {
        if (feed.release()) setRows(feed.rows);
      }, MAX_WAIT_MS);
    }
  });

  // A reveal, or the end of a request, may free a waiting bet.
  useEffect(() => {
    let settleTimer: ReturnType<typeof setTimeout> | undefined;
    const release = () => {
      if (feed.waitingCount > 0 && feed.release()) setRows(feed.rows);
    };
    const stopReveals = subscribeReveals(release);
    // Only a request that ends counts: the cache also reports every render of a component
    // with a mutation hook (its options), and those must not keep the player's bet waiting.
    const stopMutations = queryClient.getMutationCache().subscribe((event) => {
      if (event.type !== 'updated' || (event.action.type !== 'success' && event.action.type !== 'error')) return;
      if (queryClient.isMutating() > 0) return;
      requests.idleSince = Date.now();
      clearTimeout(settleTimer);
      settleTimer = setTimeout(release, SETTLE_MS);
    });
    return () => {
      stopReveals();
      stopMutations();
      clearTimeout(settleTimer);
      clearTimeout(waitTimer.current);
    };
  }, [feed, queryClient, requests]);

  return (
    <>
      <p className={styles.status} data-status={status}>
        {STATUS_TEXT[status]}
      </p>
      <LiveTable rows={rows.map(toRow)} label={label} empty="Waiting for bets…" />
    </>
  );
}

/** MyBetsTab is the player's own latest bets: the history read when the table opened, then each reveal. */
function MyBetsTab() {
  const user = useUser().data;
  const reveals = useReveals();
  const history = useRecentBets(undefined, { enabled: Boolean(user) }, LIVE_ROWS);
  if (!user) return <p className={styles.empty}>Sign in to see your bets here.</p>;
  const rows: Row[] = recentOutcomes(reveals, history.data?.bets ?? [], { limit: LIVE_ROWS, held: isHeld }).map(
    (o) => ({
      id: o.betId,
      game: o.game,
      player: user.username,
      hidden: false,
      at: o.at,
      amount: o.amount,
      multiplier: o.multiplier,
      payout: o.payout,
    }),
  );
  return <LiveTable rows={rows} label="My bets" empty={history.isPending ? 'Loading…' : 'No bets yet.'} />;
}

/**
 * LiveBets is the table under the games: All bets and High rollers stream the floor as
 * bets settle, My bets shows the player's own. Only the open tab keeps a connection.
 */
export function LiveBets() {
  const [tab, setTab] = useState('all');
  const headingId = useId();
  return (
    <section className={styles.live} aria-labelledby={headingId}>
      <h2 id={headingId} className={styles.heading}>
        Live bets
      </h2>
      <Tabs value={tab} onValueChange={setTab} className={styles.tabs}>
        <TabsList aria-label="Live bets">
          <TabsTrigger value="all">All bets</TabsTrigger>
          <TabsTrigger value="high">High rollers</TabsTrigger>
          <TabsTrigger value="mine">My bets</TabsTrigger>
        </TabsList>
        <TabsContent value="all">
          <FloorTab label="All bets" />
        </TabsContent>
        <TabsContent value="high">
          <FloorTab minAmount={HIGH_ROLLER_MIN} label="High rollers" />
        </TabsContent>
        <TabsContent value="mine">
          <MyBetsTab />
        </TabsContent>
      </Tabs>
    </section>
  );
}
