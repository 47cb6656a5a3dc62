import { useEffect, useRef } from 'react';

/**
 * useDebouncedCallback returns run(...args), which calls callback once no
 * further run happened for delayMs, and cancel(), which drops a pending call.
 * A pending call is dropped on unmount.
 */
export function useDebouncedCallback<Args extends unknown[]>(callback: (...args: Args) => void, delayMs: number) {
  const timer = useRef<number | undefined>(undefined);
  const latest = useRef(callback);

  useEffect(() => {
    latest.current = callback;
  });

  useEffect(
    () => () => {
      window.clearTimeout(timer.current);
    },
    [],
  );

  const cancel = () => {
    window.clearTimeout(timer.current);
    timer.current = undefined;
  };

  const run = (...args: Args) => {
    cancel();
    timer.current = window.setTimeout(() => {
      timer.current = undefined;
      latest.current(...args);
    }, delayMs);
  };

  return { run, cancel };
}
