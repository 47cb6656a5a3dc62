import { vi } from 'vitest';

/** FakeEventSource stands in for the browser's EventSource: tests open, feed and break its connections. */
export class FakeEventSource {
  static instances: FakeEventSource[] = [];

  readonly url: string;
  closed = false;
  onopen: ((event: Event) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  private listeners = new Map<string, Set<(event: MessageEvent<string>) => void>>();

  constructor(url: string | URL) {
    this.url = String(url);
    FakeEventSource.instances.push(this);
  }

  addEventListener(type: string, listener: (event: MessageEvent<string>) => void) {
    const set = this.listeners.get(type) ?? new Set();
    set.add(listener);
    this.listeners.set(type, set);
  }

  removeEventListener(type: string, listener: (event: MessageEvent<string>) => void) {
    this.listeners.get(type)?.delete(listener);
  }

  close() {
    this.closed = true;
  }

  /** open reports the connection as established. */
  open() {
    this.onopen?.(new Event('open'));
  }

  /** emit delivers an event of type with data, as the server's "event:" and "data:" lines would. */
  emit(type: string, data: string) {
    if (this.closed) return;
    for (const l of this.listeners.get(type) ?? []) l(new MessageEvent(type, { data }));
  }

  /** fail reports a broken connection. */
  fail() {
    this.onerror?.(new Event('error'));
  }
}

/** installEventSource makes EventSource the fake and forgets earlier instances; it returns the class. */
export function installEventSource(): typeof FakeEventSource {
  FakeEventSource.instances = [];
  vi.stubGlobal('EventSource', FakeEventSource);
  return FakeEventSource;
}

/** openStreams lists the connections not closed yet. */
export function openStreams(): FakeEventSource[] {
  return FakeEventSource.instances.filter((s) => !s.closed);
}
