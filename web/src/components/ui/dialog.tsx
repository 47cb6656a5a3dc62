import * as DialogPrimitive from '@radix-ui/react-dialog';
import { useRef, type ReactNode } from 'react';
import styles from './dialog.module.css';

// The app's only wrapper of Radix Dialog: modal, focus-trapped, closes on
// Escape and on the close button. It opens on its first field and gives focus
// back to whatever opened it: the app opens its dialogs from state, not from a
// Radix Trigger, and Radix alone only returns focus to a Trigger.

export const Dialog = DialogPrimitive.Root;
export const DialogTrigger = DialogPrimitive.Trigger;
export const DialogClose = DialogPrimitive.Close;

export interface DialogContentProps {
  title: string;
  description?: ReactNode;
  children: ReactNode;
  /** preventOutsideClose keeps the dialog open on outside clicks, e.g. while a request is running. */
  preventOutsideClose?: boolean;
  /** size widens the dialog for panels with tables (default md). */
  size?: 'md' | 'lg';
}

function preventDefault(event: Event) {
  event.preventDefault();
}

/** Clicking a notification (e.g. its dismiss button) must not close the dialog underneath. */
function ignoreToasts(event: Event) {
  if (event.target instanceof Element && event.target.closest('[data-toaster]')) event.preventDefault();
}

/** FIRST_FIELD is what a dialog focuses when it opens, before Radix's default (its first tabbable, the close button). */
const FIRST_FIELD =
  'input:not([type="hidden"]):not([disabled]):not([type="checkbox"]), select:not([disabled]), textarea:not([disabled])';

export function DialogContent({ title, description, children, preventOutsideClose, size = 'md' }: DialogContentProps) {
  const opener = useRef<HTMLElement | null>(null);
  const onOpenAutoFocus = (event: Event) => {
    // Radix asks before moving focus in: the opener still has it.
    const active = document.activeElement;
    opener.current = active instanceof HTMLElement && active !== document.body ? active : null;
    const field = event.currentTarget instanceof HTMLElement ? event.currentTarget.querySelector(FIRST_FIELD) : null;
    if (field instanceof HTMLElement) {
      event.preventDefault();
      field.focus();
    }
  };
  const onCloseAutoFocus = (event: Event) => {
    const target = opener.current;
    if (target?.isConnected) {
      event.preventDefault();
      target.focus();
    }
  };
  return (
    <DialogPrimitive.Portal>
      <DialogPrimitive.Overlay className={styles.overlay} />
      <DialogPrimitive.Content
        className={size === 'lg' ? `${styles.content} ${styles.lg}` : styles.content}
        onPointerDownOutside={preventOutsideClose ? preventDefault : ignoreToasts}
        onOpenAutoFocus={onOpenAutoFocus}
        onCloseAutoFocus={onCloseAutoFocus}
        // Without a description Radix expects aria-describedby to be explicitly unset.
        {...(description ? {} : { 'aria-describedby': undefined })}
      >
        <div className={styles.header}>
          <DialogPrimitive.Title className={styles.title}>{title}</DialogPrimitive.Title>
          <DialogPrimitive.Close className={styles.close} aria-label="Close">
            <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true">
              <path d="M6 6l12 12M18 6L6 18" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
            </svg>
          </DialogPrimitive.Close>
        </div>
        {description ? (
          <DialogPrimitive.Description className={styles.description}>{description}</DialogPrimitive.Description>
        ) : null}
        <div className={styles.body}>{children}</div>
      </DialogPrimitive.Content>
    </DialogPrimitive.Portal>
  );
}
