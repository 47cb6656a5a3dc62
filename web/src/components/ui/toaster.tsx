import { useEffect, useRef, useState, useSyncExternalStore, type FocusEvent } from 'react';
import { getToasts, subscribeToasts, toast, type ToastItem } from '@/lib/toast';
import styles from './toaster.module.css';

// Renders lib/toast's store: at most three notifications, each closing after
// its duration (4 s by default). Hovering or focusing the list pauses the
// timers. The list is a polite live region that exists from the start, so
// each new message is announced once, and its text appears only once in the
// page.

const ICONS: Record<ToastItem['variant'], string> = {
  success: 'M7.5 12.5l3 3 6-6.5',
  error: 'M12 7v6m0 4h.01',
  info: 'M12 11v6m0-10h.01',
};

function ToastCard({ item, paused }: { item: ToastItem; paused: boolean }) {
  const remaining = useRef(item.duration);

  useEffect(() => {
    if (paused) return;
    const started = Date.now();
    const timer = window.setTimeout(() => {
      toast.dismiss(item.id);
    }, remaining.current);
    return () => {
      window.clearTimeout(timer);
      remaining.current -= Date.now() - started;
    };
  }, [paused, item.id]);

  return (
    <li
      className={`${styles.toast} ${styles[item.variant]}`}
      onKeyDown={(event) => {
        if (event.key === 'Escape') toast.dismiss(item.id);
      }}
    >
      <svg className={styles.icon} viewBox="0 0 24 24" width="20" height="20" aria-hidden="true">
        <circle cx="12" cy="12" r="10" fill="none" stroke="currentColor" strokeWidth="2" />
        <path d={ICONS[item.variant]} fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
      </svg>
      <p className={styles.message}>{item.message}</p>
      <button
        type="button"
        className={styles.close}
        aria-label="Dismiss notification"
        onClick={() => {
          // Remove the toast after this click has finished: an open modal dialog checks, on the same click,
          // whether its target lies in the notifications, which it cannot tell once the target is gone.
          window.setTimeout(() => {
            toast.dismiss(item.id);
          }, 0);
        }}
      >
        <svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true">
          <path d="M6 6l12 12M18 6L6 18" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
        </svg>
      </button>
    </li>
  );
}

export function Toaster() {
  const items = useSyncExternalStore(subscribeToasts, getToasts, getToasts);
  const [hovered, setHovered] = useState(false);
  const [focused, setFocused] = useState(false);

  const onBlur = (event: FocusEvent<HTMLElement>) => {
    if (!(event.relatedTarget instanceof Node && event.currentTarget.contains(event.relatedTarget))) setFocused(false);
  };

  return (
    <section
      aria-label="Notifications"
      className={styles.viewport}
      data-toaster=""
      onPointerEnter={() => {
        setHovered(true);
      }}
      onPointerLeave={() => {
        setHovered(false);
      }}
      onFocus={() => {
        setFocused(true);
      }}
      onBlur={onBlur}
    >
      <ol className={styles.list} aria-live="polite" aria-relevant="additions text">
        {items.map((item) => (
          <ToastCard key={item.id} item={item} paused={hovered || focused} />
        ))}
      </ol>
    </section>
  );
}
