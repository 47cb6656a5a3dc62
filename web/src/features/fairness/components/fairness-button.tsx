import { lazy, Suspense, useState } from 'react';
import { Button } from '@/components/ui/button';

// The panel (seeds, bet history, the browser verifier) loads on first use, so the
// game screens ship without it.
const loadPanel = () => import('./fairness-dialog');
const FairnessDialog = lazy(loadPanel);

function prefetch() {
  void loadPanel();
}

/** FairnessButton opens the provably-fair panel: seeds, rotation, My Bets and verification. */
export function FairnessButton() {
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button
        variant="secondary"
        size="sm"
        aria-haspopup="dialog"
        onPointerEnter={prefetch}
        onFocus={prefetch}
        onClick={() => {
          setOpen(true);
        }}
      >
        <svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true">
          <path
            d="M12 3l7 3v5c0 4.5-3 8.5-7 10-4-1.5-7-5.5-7-10V6z M8.5 12l2.5 2.5 4.5-5"
            fill="none"
            stroke="currentColor"
            strokeWidth="2"
            strokeLinejoin="round"
          />
        </svg>
        Fairness
      </Button>
      {open ? (
        <Suspense fallback={null}>
          <FairnessDialog
            onClose={() => {
              setOpen(false);
            }}
          />
        </Suspense>
      ) : null}
    </>
  );
}
