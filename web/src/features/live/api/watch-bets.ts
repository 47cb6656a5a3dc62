import { useEffect, useRef, useState } from 'react';
import type { LiveBetSchema } from '@/gen/fairplay/v1/live_pb';
import type { ApiJson } from '@/lib/api-types';

// The casino floor's stream (GET /api/live/bets, Server-Sent Events): every
// settled bet of every player, one "bets" event per batch, whose data is a
// WatchBetsResponse as JSON. EventSource carries no token and needs none.

/** LiveBet is one settled bet as the whole floor sees it. */
export type LiveBet = ApiJson<typeof LiveBetSchema>;

/** StreamStatus is what the table says about its connection. */
export type StreamStatus = 'connecting' | 'open' | 'reconnecting' | 'paused';

/** liveBetsUrl is the stream's address; minAmount keeps only stakes of at least that much. */
export function liveBetsUrl(minAmount?: number): string {
  return minAmount && minAmount > 0
    ? `/api/live/bets?minAmount=${encodeURIComponent(String(minAmount))}`
    : '/api/live/bets';
}

function isLiveBet(value: unknown): value is LiveBet {
  if (typeof value !== 'object' || value === null) return false;
  const b = value as Record<string, unknown>;
  return (
    typeof b._id === 'string' &&
    typeof b.game === 'string' &&
    typeof b.username === 'string' &&
    typeof b.hidden === 'boolean' &&
    typeof b.amount === 'number' &&
    typeof b.multiplier === 'number' &&
    typeof b.payout === 'number' &&
    typeof b.settledAt === 'string'
  );
}

/** parseBets reads one "bets" event's data, oldest first; malformed data or rows are dropped, never shown half-read. */
export function parseBets(data: string): LiveBet[] {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return [];
  }
  const bets = typeof value === 'object' && value !== null ? (value as { bets?: unknown }).bets : undefined;
  return Array.isArray(bets) ? bets.filter(isLiveBet) : [];
}

export interface LiveStreamOptions {
  url: string;
  onBets: (bets: LiveBet[]) => void;
  onStatus?: (status: StreamStatus) => void;
  /** hiddenGraceMs: a tab hidden this long closes its stream until it is shown again (default a minute). */
  hiddenGraceMs?: number;
  /** retryMs and maxRetryMs bound the reconnection backoff (default 1 s doubling up to 30 s). */
  retryMs?: number;
  maxRetryMs?: number;
}

/**
 * openLiveStream reads the stream until the returned function is called. A broken
 * connection is reopened after a growing, jittered delay (the browser's own retry is
 * replaced, so a server that is down is not hammered by every open tab at once); a tab
 * hidden for hiddenGraceMs lets its connection go, and takes a new one when shown.
 */
export function openLiveStream({
  url,
  onBets,
  onStatus,
  hiddenGraceMs = 60_000,
  retryMs = 1000,
  maxRetryMs = 30_000,
}: LiveStreamOptions): () => void {
  let source: EventSource | null = null;
  let attempt = 0;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let hiddenTimer: ReturnType<typeof setTimeout> | undefined;
  let paused = false;
  let closed = false;

  const onMessage = (event: MessageEvent<string>) => {
    const bets = parseBets(event.data);
    if (bets.length) onBets(bets);
  };

  const disconnect = () => {
    clearTimeout(retryTimer);
    if (!source) return;
    source.removeEventListener('bets', onMessage);
    source.close();
    source = null;
  };

  const connect = () => {
    disconnect();
    if (closed || paused || typeof EventSource === 'undefined') return;
    onStatus?.(attempt === 0 ? 'connecting' : 'reconnecting');
    const es = new EventSource(url);
    source = es;
    es.addEventListener('bets', onMessage);
    es.onopen = () => {
      attempt = 0;
      onStatus?.('open');
    };
    es.onerror = () => {
      if (source !== es) return;
      disconnect();
      const delay = Math.min(maxRetryMs, retryMs * 2 ** attempt);
      attempt++;
      onStatus?.('reconnecting');
      // Half to all of the delay: tabs dropped together come back spread out.
      retryTimer = setTimeout(connect, delay * (0.5 + Math.random() / 2));
    };
  };

  const onVisibility = () => {
    clearTimeout(hiddenTimer);
    if (document.visibilityState === 'hidden') {
      hiddenTimer = setTimeout(() => {
        paused = true;
        disconnect();
        onStatus?.('paused');
      }, hiddenGraceMs);
    } else if (paused) {
      paused = false;
      attempt = 0;
      connect();
    }
  };

  document.addEventListener('visibilitychange', onVisibility);
  connect();
  return () => {
    closed = true;
    clearTimeout(hiddenTimer);
    document.removeEventListener('visibilitychange', onVisibility);
    disconnect();
  };
}

/** useLiveStream keeps the stream at url open while the component is mounted; onBets gets every batch. */
export function useLiveStream(url: string, onBets: (bets: LiveBet[]) => void): StreamStatus {
  const [status, setStatus] = useState<StreamStatus>('connecting');
  const handler = useRef(onBets);
  useEffect(() => {
    handler.current = onBets;
  });
  useEffect(
    () =>
      openLiveStream({
        url,
        onBets: (bets) => {
          handler.current(bets);
        },
        onStatus: setStatus,
      }),
    [url],
  );
  return status;
}
