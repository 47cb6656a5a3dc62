import * as ToastPrimitive from '@radix-ui/react-toast';
import { useSyncExternalStore } from 'react';
import { getToasts, subscribeToasts, toast, TOAST_DURATION_MS, type ToastItem } from '@/lib/toast';
import styles from './toaster.module.css';

// The app's only wrapper of Radix Toast: renders lib/toast's store (at most
// three at a time, each closing after its duration; hovering or focusing the
// list pauses the timers, F8 jumps to it).

const ICONS: Record<ToastItem['variant'], string> = {
  success: 'M5 12.5l4.5 4.5L19 7.5',
  error: 'M12 7v6m0 4h.01',
  info: 'M12 11v6m0-10h.01',
};

function ToastCard({ item }: { item: ToastItem }) {
  return (
    <ToastPrimitive.Root
      className={`${styles.toast} ${styles[item.variant]}`}
      duration={item.duration}
      type={item.variant === 'error' ? 'foreground' : 'background'}
      onOpenChange={(open) => {
        if (!open) toast.dismiss(item.id);
      }}
    >
      <svg className={styles.icon} viewBox="0 0 24 24" width="20" height="20" aria-hidden="true">
        <circle cx="12" cy="12" r="10" fill="none" stroke="currentColor" strokeWidth="2" />
        <path d={ICONS[item.variant]} fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
      </svg>
      <ToastPrimitive.Description className={styles.message}>{item.message}</ToastPrimitive.Description>
      <ToastPrimitive.Close className={styles.close} aria-label="Dismiss notification">
        <svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true">
          <path d="M6 6l12 12M18 6L6 18" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
        </svg>
      </ToastPrimitive.Close>
    </ToastPrimitive.Root>
  );
}

export function Toaster() {
  const items = useSyncExternalStore(subscribeToasts, getToasts, getToasts);
  return (
    <ToastPrimitive.Provider duration={TOAST_DURATION_MS} swipeDirection="right" label="Notification">
      {items.map((item) => (
        <ToastCard key={item.id} item={item} />
      ))}
      <ToastPrimitive.Viewport className={styles.viewport} label="Notifications ({hotkey})" />
    </ToastPrimitive.Provider>
  );
}
