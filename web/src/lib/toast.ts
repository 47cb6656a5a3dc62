// A tiny store behind the toast notifications (SPEC.md §2: at most 3 visible,
// 4 seconds by default). Any code may call toast.*; the Toaster in
// components/ui renders the store.

export type ToastVariant = 'success' | 'error' | 'info';

export interface ToastItem {
  id: number;
  message: string;
  variant: ToastVariant;
  duration: number;
}

export const TOAST_LIMIT = 3;
export const TOAST_DURATION_MS = 4000;

type Listener = () => void;

let nextId = 1;
let items: readonly ToastItem[] = [];
const listeners = new Set<Listener>();

function emit(): void {
  for (const listener of listeners) listener();
}

function show(message: string, variant: ToastVariant, duration = TOAST_DURATION_MS): number {
  const id = nextId++;
  // The newest toasts win: when a fourth arrives the oldest one leaves.
  items = [...items, { id, message, variant, duration }].slice(-TOAST_LIMIT);
  emit();
  return id;
}

export const toast = {
  info: (message: string, options?: { duration?: number }) => show(message, 'info', options?.duration),
  success: (message: string, options?: { duration?: number }) => show(message, 'success', options?.duration),
  error: (message: string, options?: { duration?: number }) => show(message, 'error', options?.duration),
  dismiss(id: number): void {
    if (!items.some((item) => item.id === id)) return;
    items = items.filter((item) => item.id !== id);
    emit();
  },
  clear(): void {
    items = [];
    emit();
  },
};

export function getToasts(): readonly ToastItem[] {
  return items;
}

export function subscribeToasts(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
