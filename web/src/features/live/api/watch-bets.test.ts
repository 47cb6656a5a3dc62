import { installEventSource, openStreams } from '@/testing/event-source';
import { liveBetsUrl, openLiveStream, parseBets, type StreamStatus } from './watch-bets';

const row = {
  _id: 'b1',
  game: 'dice',
  username: 'bob',
  hidden: false,
  amount: 1.5,
  multiplier: 2,
  payout: 3,
  settledAt: '2026-11-24T05:00:00Z',
};

function setVisibility(state: 'visible' | 'hidden') {
  Object.defineProperty(document, 'visibilityState', { value: state, configurable: true });
  document.dispatchEvent(new Event('visibilitychange'));
}

describe('parseBets', () => {
  it('reads a WatchBetsResponse', () => {
    expect(parseBets(JSON.stringify({ bets: [row] }))).toEqual([row]);
  });

  it.each([
    ['not JSON', 'nope'],
    ['no bets', '{}'],
    ['bets not a list', '{"bets": 3}'],
    ['amount as a string', JSON.stringify({ bets: [{ ...row, amount: '1.5' }] })],
    ['no id', JSON.stringify({ bets: [{ ...row, _id: undefined }] })],
  ])('drops %s', (_, data) => {
    expect(parseBets(data)).toEqual([]);
  });

  it('keeps the good rows of a batch', () => {
    expect(parseBets(JSON.stringify({ bets: [{ nonsense: true }, row] }))).toEqual([row]);
  });
});

describe('liveBetsUrl', () => {
  it('adds minAmount only when it is above 0', () => {
    expect(liveBetsUrl()).toBe('/api/live/bets');
    expect(liveBetsUrl(0)).toBe('/api/live/bets');
    expect(liveBetsUrl(100)).toBe('/api/live/bets?minAmount=100');
  });
});

describe('openLiveStream', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(1);
  });
  afterEach(() => {
    setVisibility('visible');
    vi.useRealTimers();
  });

  it('passes on "bets" events and closes when told', () => {
    const ES = installEventSource();
    const onBets = vi.fn();
    const close = openLiveStream({ url: '/api/live/bets', onBets });
    const [es] = ES.instances;
    expect(es?.url).toBe('/api/live/bets');
    es?.emit('bets', JSON.stringify({ bets: [row] }));
    es?.emit('message', JSON.stringify({ bets: [row] }));
    es?.emit('bets', 'garbage');
    expect(onBets).toHaveBeenCalledTimes(1);
    expect(onBets).toHaveBeenCalledWith([row]);
    close();
    expect(es?.closed).toBe(true);
    vi.advanceTimersByTime(60_000);
    expect(ES.instances).toHaveLength(1);
  });

  it('reconnects after a growing delay, and starts over once connected', () => {
    const ES = installEventSource();
    const statuses: StreamStatus[] = [];
    const close = openLiveStream({
      url: '/api/live/bets',
      onBets: vi.fn(),
      onStatus: (s) => statuses.push(s),
      retryMs: 1000,
      maxRetryMs: 4000,
    });
    ES.instances[0]?.fail();
    expect(ES.instances[0]?.closed).toBe(true);
    vi.advanceTimersByTime(999);
    expect(ES.instances).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(ES.instances).toHaveLength(2);
    ES.instances[1]?.fail();
    vi.advanceTimersByTime(1999);
    expect(ES.instances).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(ES.instances).toHaveLength(3);
    ES.instances[2]?.fail();
    vi.advanceTimersByTime(4000);
    ES.instances[3]?.fail();
    // The delay stops growing at maxRetryMs.
    vi.advanceTimersByTime(4000);
    expect(ES.instances).toHaveLength(5);
    ES.instances[4]?.open();
    ES.instances[4]?.fail();
    vi.advanceTimersByTime(1000);
    expect(ES.instances).toHaveLength(6);
    expect(statuses.slice(0, 3)).toEqual(['connecting', 'reconnecting', 'reconnecting']);
    expect(statuses).toContain('open');
    close();
    expect(openStreams()).toHaveLength(0);
  });

  it('lets the connection go when the tab stays hidden, and takes a new one when shown', () => {
    const ES = installEventSource();
    const statuses: StreamStatus[] = [];
    const close = openLiveStream({
      url: '/api/live/bets',
      onBets: vi.fn(),
      onStatus: (s) => statuses.push(s),
      hiddenGraceMs: 5000,
    });
    setVisibility('hidden');
    vi.advanceTimersByTime(4000);
    setVisibility('visible');
    setVisibility('hidden');
    vi.advanceTimersByTime(4999);
    expect(openStreams()).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(openStreams()).toHaveLength(0);
    expect(statuses.at(-1)).toBe('paused');
    setVisibility('visible');
    expect(openStreams()).toHaveLength(1);
    expect(ES.instances).toHaveLength(2);
    close();
    expect(openStreams()).toHaveLength(0);
  });
});
