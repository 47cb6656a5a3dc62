import * as DialogPrimitive from '@radix-ui/react-dialog';
import type { ReactNode } from 'react';
import styles from './dialog.module.css';

// The app's only wrapper of Radix Dialog: modal, focus-trapped, closes on
// Escape and on the close button, and restores focus to the opener.

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

export function DialogContent({ title, description, children, preventOutsideClose, size = 'md' }: DialogContentProps) {
  return (
    <DialogPrimitive.Portal>
      <DialogPrimitive.Overlay className={styles.overlay} />
      <DialogPrimitive.Content
        className={size === 'lg' ? `${styles.content} ${styles.lg}` : styles.content}
        onPointerDownOutside={preventOutsideClose ? preventDefault : ignoreToasts}
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
