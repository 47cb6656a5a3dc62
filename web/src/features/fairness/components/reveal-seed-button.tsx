import { useState } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { errorMessage } from '@/lib/api-client';
import { useRotateSeed } from '../api/rotate-seed';

/**
 * RevealSeedButton rotates the seed pair in one click, keeping the client seed: the old
 * server seed is revealed, and every bet-history query refreshes, so a bet shown next to it
 * verifies at once (the My Bets page's details).
 */
export function RevealSeedButton() {
  const rotate = useRotateSeed();
  const [error, setError] = useState<string | null>(null);
  return (
    <>
      <Button
        variant="secondary"
        disabled={rotate.isPending}
        onClick={() => {
          setError(null);
          rotate.mutate(
            { clientSeed: '' },
            {
              onError: (err) => {
                setError(errorMessage(err, 'Failed to rotate the seed pair'));
              },
            },
          );
        }}
      >
        {rotate.isPending ? 'Revealing…' : 'Reveal the seed and verify'}
      </Button>
      {error ? <Alert>{error}</Alert> : null}
    </>
  );
}
