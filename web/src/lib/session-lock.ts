// The lock the browser's tabs share on the session cookie. Its refresh token
// rotates, and a tab sending the token another tab has just retired would
// end the session (the server takes a retired token for a stolen one), so
// the calls that send or replace the cookie run one at a time per browser.
//
// The Web Locks API is the lock. Browsers offer it only in secure contexts
// (HTTPS, localhost), and a casino served over plain http on a LAN address
// is not one: there a lease in localStorage stands in. It holds no secret
// (a tab id and an expiry), and it is not a perfect lock (two tabs can both
// see it free within a few milliseconds), which the second look after
// writing it makes rare; a lease expires, so a tab closed while holding it
// blocks nobody for long, and the tab holding it renews it while its call runs.

const SESSION_LOCK = 'fairplay.session';
export const LEASE_KEY = 'fairplay.session.lease';
/** LEASE_MS bounds how long a tab may hold the lease: longer than a refresh takes. */
export const LEASE_MS = 10_000;
/** SETTLE_MS is how long a tab waits after taking the lease before it looks again. */
const SETTLE_MS = 25;

interface Lease {
  tab: string;
  until: number;
}

const TAB = Math.random().toString(36).slice(2);

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function readLease(store: Storage): Lease | null {
  try {
    const lease = JSON.parse(store.getItem(LEASE_KEY) ?? 'null') as Lease | null;
    return lease && typeof lease.tab === 'string' && typeof lease.until === 'number' ? lease : null;
  } catch {
    return null; // not ours, or broken: free
  }
}

/** takeLease waits until this tab holds the lease, and reports whether it does (false: storage unusable). */
async function takeLease(store: Storage, signal?: AbortSignal): Promise<boolean> {
  for (;;) {
    signal?.throwIfAborted();
    const lease = readLease(store);
    // A lease further ahead than any tab takes one is not a tab's (a script
    // wrote it to block the session calls for good): free.
    if (!lease || lease.until <= Date.now() || lease.until > Date.now() + LEASE_MS || lease.tab === TAB) {
      try {
        store.setItem(LEASE_KEY, JSON.stringify({ tab: TAB, until: Date.now() + LEASE_MS } satisfies Lease));
      } catch {
        return false; // a full storage: no lease to share
      }
      await sleep(SETTLE_MS);
      if (readLease(store)?.tab === TAB) return true;
    }
    await sleep(SETTLE_MS + Math.random() * 75);
  }
}

/** queue runs this tab's lease holders one after another (the lease itself tells tabs apart only). */
let queue: Promise<unknown> = Promise.resolve();

function withLease<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  const run = queue.then(() => leased(task, signal));
  queue = run.catch(() => undefined);
  return run;
}

async function leased<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  let store: Storage;
  try {
    store = window.localStorage;
    store.getItem(LEASE_KEY);
  } catch {
    return task(); // no storage to share: the tab's own single flight is all there is
  }
  if (!(await takeLease(store, signal))) return task();
  // Renewed while the task runs: a call slower than a lease (a slow network)
  // must not let another tab send the token it may be rotating.
  const renew = setInterval(() => {
    try {
      if (readLease(store)?.tab === TAB) {
        store.setItem(LEASE_KEY, JSON.stringify({ tab: TAB, until: Date.now() + LEASE_MS } satisfies Lease));
      }
    } catch {
      // A full storage: the lease runs out as it is.
    }
  }, LEASE_MS / 4);
  try {
    return await task();
  } finally {
    clearInterval(renew);
    if (readLease(store)?.tab === TAB) store.removeItem(LEASE_KEY);
  }
}

/**
 * withSessionLock runs task holding the lock the browser's tabs share on the
 * session cookie; signal also gives up the wait for it.
 */
export function withSessionLock<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  if ('locks' in navigator) return navigator.locks.request(SESSION_LOCK, { signal }, task);
  return withLease(task, signal);
}
