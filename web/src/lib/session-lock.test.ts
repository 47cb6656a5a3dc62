import { deferred } from '@/testing/mock-api';
import { LEASE_KEY, LEASE_MS, withSessionLock } from './session-lock';

// Without the Web Locks API (jsdom has none, as a plain-http page has none)
// the tabs share a lease in localStorage.

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

afterEach(() => {
  localStorage.clear();
});

describe('withSessionLock without the Web Locks API', () => {
  it('runs one task at a time, each holding the lease, and gives it back', async () => {
    expect('locks' in navigator).toBe(false);
    const running: string[] = [];
    let overlap = false;
    const task = (name: string) => async () => {
      if (running.length > 0) overlap = true;
      running.push(name);
      expect(localStorage.getItem(LEASE_KEY)).not.toBeNull();
      await sleep(40);
      running.splice(running.indexOf(name), 1);
      return name;
    };
    await expect(Promise.all([withSessionLock(task('a')), withSessionLock(task('b'))])).resolves.toEqual(['a', 'b']);
    expect(overlap).toBe(false);
    expect(localStorage.getItem(LEASE_KEY)).toBeNull();
  });

  it('takes a lease another tab left to expire, and waits for a live one', async () => {
    localStorage.setItem(LEASE_KEY, JSON.stringify({ tab: 'closed-tab', until: Date.now() - 1 }));
    await expect(withSessionLock(() => Promise.resolve('expired'))).resolves.toBe('expired');

    localStorage.setItem(LEASE_KEY, JSON.stringify({ tab: 'other-tab', until: Date.now() + LEASE_MS }));
    let ran = false;
    const done = withSessionLock(() => {
      ran = true;
      return Promise.resolve();
    });
    await sleep(150);
    expect(ran).toBe(false);
    localStorage.removeItem(LEASE_KEY);
    await done;
    expect(ran).toBe(true);
  });

  it('gives up waiting when the signal aborts', async () => {
    localStorage.setItem(LEASE_KEY, JSON.stringify({ tab: 'other-tab', until: Date.now() + LEASE_MS }));
    const controller = new AbortController();
    const waiting = withSessionLock(() => Promise.resolve(), controller.signal);
    controller.abort();
    await expect(waiting).rejects.toThrow();
  });

  it('a lease further ahead than any tab takes one counts as free: a script cannot block the session calls for good', async () => {
    localStorage.setItem(LEASE_KEY, JSON.stringify({ tab: 'script', until: 9e15 }));
    await expect(withSessionLock(() => Promise.resolve('ran'))).resolves.toBe('ran');
  });

  it('the tab holding the lease renews it while its call runs, however long the call takes', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    try {
      const slow = deferred<undefined>();
      const started = deferred<undefined>();
      const done = withSessionLock(async () => {
        started.resolve(undefined);
        await slow.promise;
      });
      await started.promise;
      vi.advanceTimersByTime(3 * LEASE_MS);
      const lease = JSON.parse(localStorage.getItem(LEASE_KEY) ?? 'null') as { until: number } | null;
      expect(lease?.until, 'still held after three lease lengths').toBeGreaterThan(Date.now());
      slow.resolve(undefined);
      await done;
      expect(localStorage.getItem(LEASE_KEY)).toBeNull();
    } finally {
      vi.useRealTimers();
    }
  });

  it('the lease holds no secret and a broken one counts as free', async () => {
    localStorage.setItem(LEASE_KEY, 'not json');
    await expect(withSessionLock(() => Promise.resolve('ran'))).resolves.toBe('ran');
  });
});
