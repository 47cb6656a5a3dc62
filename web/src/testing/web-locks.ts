// A stand-in for the Web Locks API (navigator.locks), which jsdom lacks:
// exclusive locks granted in the order asked for, as the browser grants them
// to its tabs. Tests hold a lock as another tab would, and check that a
// request was sent while the lock was held.

type Task = (lock: { name: string; mode: 'exclusive' }) => unknown;

export interface FakeWebLocks {
  /** requested lists the names of the locks asked for, in order. */
  requested: string[];
  /** isHeld reports whether the lock name is held now. */
  isHeld: (name: string) => boolean;
  uninstall: () => void;
}

/** installWebLocks puts a fake navigator.locks in place until uninstall. */
export function installWebLocks(): FakeWebLocks {
  const requested: string[] = [];
  const held = new Set<string>();
  const queues = new Map<string, Promise<unknown>>();
  const locks = {
    // request(name, callback) or request(name, options, callback).
    request(name: string, ...rest: unknown[]): Promise<unknown> {
      const task = rest[rest.length - 1] as Task;
      requested.push(name);
      const run = (queues.get(name) ?? Promise.resolve()).then(async () => {
        held.add(name);
        try {
          return await task({ name, mode: 'exclusive' });
        } finally {
          held.delete(name);
        }
      });
      queues.set(
        name,
        run.catch(() => undefined),
      );
      return run;
    },
  };
  Object.defineProperty(navigator, 'locks', { configurable: true, value: locks });
  return {
    requested,
    isHeld: (name) => held.has(name),
    uninstall: () => {
      Reflect.deleteProperty(navigator, 'locks');
    },
  };
}
