import { useEffect, useRef, useSyncExternalStore } from 'react';
import { doubleBet, formatBetInput, halveBet, parseBetAmount } from '@/lib/bet';

// Game hotkeys (issue 19): off by default, like Stake's, switched on in the "?" panel and
// remembered in localStorage. Each game lists its own keys; the panel shows that list.

/** Hotkey is one key of a game: key is KeyboardEvent.key, lowercased (" " for Space). */
export interface Hotkey {
  key: string;
  /** label is how the panel shows the key, e.g. "Space". */
  label: string;
  description: string;
  /** run does what the key does; it is not called while disabled. */
  run: () => void;
  /** disabled is true while the key must not fire, e.g. a request it would duplicate is in flight. */
  disabled?: boolean;
}

const STORAGE_KEY = 'fairplay.hotkeys';
const listeners = new Set<() => void>();

function read(): boolean {
  try {
    return window.localStorage.getItem(STORAGE_KEY) === 'on';
  } catch {
    return false;
  }
}

/** setHotkeysEnabled switches the hotkeys of every game on or off and remembers it. */
export function setHotkeysEnabled(on: boolean): void {
  try {
    if (on) window.localStorage.setItem(STORAGE_KEY, 'on');
    else window.localStorage.removeItem(STORAGE_KEY);
  } catch {
    // Storage blocked: the switch does not stick.
  }
  listeners.forEach((l) => {
    l();
  });
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  const onStorage = (event: StorageEvent) => {
    if (event.key === STORAGE_KEY) listener();
  };
  window.addEventListener('storage', onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('storage', onStorage);
  };
}

/** useHotkeysEnabled is the on/off switch of the hotkeys (off by default). */
export function useHotkeysEnabled(): boolean {
  return useSyncExternalStore(subscribe, read, () => false);
}

const TEXT_INPUTS = new Set(['text', 'number', 'email', 'password', 'search', 'tel', 'url']);
const ACTIVATED_BY_KEYS =
  'button, a[href], summary, [role="button"], [role="tab"], [role="switch"], [role="menuitem"], [role="option"], [role="checkbox"], [role="radio"], input, select';

/**
 * ignored tells whether a key press is not a hotkey: a modifier is held, it repeats, focus is in a text field, a
 * dialog is open, or Space/Enter would activate the focused control (the control's own action wins).
 */
export function ignored(event: KeyboardEvent): boolean {
  if (event.ctrlKey || event.metaKey || event.altKey || event.shiftKey || event.repeat || event.defaultPrevented)
    return true;
  const target = event.target instanceof Element ? event.target : null;
  if (!target) return false;
  if (target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) return true;
  if (target instanceof HTMLInputElement && TEXT_INPUTS.has(target.type)) return true;
  if (target instanceof HTMLElement && target.isContentEditable) return true;
  if (target.closest('[role="dialog"], [role="alertdialog"]')) return true;
  if ((event.key === ' ' || event.key === 'Enter') && target.closest(ACTIVATED_BY_KEYS)) return true;
  return false;
}

/** useHotkeys listens for a game's keys while the hotkeys are switched on. */
export function useHotkeys(keys: readonly Hotkey[]): void {
  const enabled = useHotkeysEnabled();
  const latest = useRef(keys);
  useEffect(() => {
    latest.current = keys;
  });
  useEffect(() => {
    if (!enabled) return;
    const onKey = (event: KeyboardEvent) => {
      if (ignored(event)) return;
      const key = event.key.toLowerCase();
      const hotkey = latest.current.find((k) => k.key === key);
      if (!hotkey) return;
      // Space would scroll the page: the key is taken even when its action cannot run now.
      event.preventDefault();
      if (hotkey.disabled) return;
      hotkey.run();
    };
    window.addEventListener('keydown', onKey);
    return () => {
      window.removeEventListener('keydown', onKey);
    };
  }, [enabled]);
}

export interface BetHotkeyOptions {
  /** bet places a bet, as the play button does. */
  bet: () => void;
  betText: string;
  setBetText: (text: string) => void;
  /** betDisabled is true while a bet is in flight or a round is running (Space must not send a second one). */
  betDisabled: boolean;
  /** amountDisabled is true while the bet amount field is. */
  amountDisabled: boolean;
  betLabel?: string;
}

/** useBetHotkeys (a hook by name only: it keeps game closures out of render-time lint) gives the keys every game shares: Space bets, Q halves the bet, W doubles it (the ½ and 2× buttons). */
export function useBetHotkeys({
  bet,
  betText,
  setBetText,
  betDisabled,
  amountDisabled,
  betLabel = 'Bet',
}: BetHotkeyOptions): Hotkey[] {
  return [
    { key: ' ', label: 'Space', description: betLabel, run: bet, disabled: betDisabled },
    {
      key: 'q',
      label: 'Q',
      description: 'Halve the bet',
      run: () => {
        setBetText(formatBetInput(halveBet(parseBetAmount(betText))));
      },
      disabled: amountDisabled,
    },
    {
      key: 'w',
      label: 'W',
      description: 'Double the bet',
      run: () => {
        setBetText(formatBetInput(doubleBet(parseBetAmount(betText))));
      },
      disabled: amountDisabled,
    },
  ];
}
