import { useState, type SubmitEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Spinner } from '@/components/ui/spinner';
import { TextField } from '@/components/ui/text-field';
import { errorMessage } from '@/lib/api-client';
import { formatCount } from '@/lib/format';
import { useSeeds } from '../api/get-seeds';
import { useRotateSeed, type RotateSeedResult } from '../api/rotate-seed';
import { useSetClientSeed } from '../api/set-client-seed';
import styles from './fairness.module.css';

/** SeedsPanel shows the active pair, edits the client seed and rotates the pair, showing the revealed seed. */
export function SeedsPanel() {
  const seeds = useSeeds();
  const setSeed = useSetClientSeed();
  const rotate = useRotateSeed();
  const [draft, setDraft] = useState<string | null>(null);
  const [revealed, setRevealed] = useState<RotateSeedResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);

  if (seeds.isPending) return <Spinner label="Loading seeds" />;
  if (seeds.isError) return <Alert>{errorMessage(seeds.error, 'Failed to load your seeds')}</Alert>;
  const pair = seeds.data.seeds;
  const clientSeed = draft ?? pair.clientSeed;
  const busy = setSeed.isPending || rotate.isPending;

  const onSave = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    setError(null);
    setSaved(false);
    setSeed.mutate(
      { clientSeed: clientSeed.trim() },
      {
        onSuccess: () => {
          setDraft(null);
          setSaved(true);
        },
        onError: (err) => {
          setError(errorMessage(err, 'Failed to change the client seed'));
        },
      },
    );
  };

  const onRotate = () => {
    setError(null);
    setSaved(false);
    const next = clientSeed.trim();
    rotate.mutate(
      { clientSeed: next === pair.clientSeed ? '' : next },
      {
        onSuccess: (res) => {
          setRevealed(res);
          setDraft(null);
        },
        onError: (err) => {
          setError(errorMessage(err, 'Failed to rotate the seed pair'));
        },
      },
    );
  };

  return (
    <div className={styles.panel}>
      <dl className={styles.facts}>
        <div>
          <dt>Active server seed (SHA-256)</dt>
          <dd className={styles.mono}>{pair.serverSeedHash}</dd>
        </div>
        <div>
          <dt>Nonce</dt>
          <dd className={styles.mono}>{formatCount(pair.nonce)}</dd>
        </div>
      </dl>
      <form className={styles.seedForm} onSubmit={onSave}>
        <TextField
          label="Client Seed"
          value={clientSeed}
          maxLength={64}
          onChange={(event) => {
            setDraft(event.target.value);
            setSaved(false);
          }}
          hint="1 to 64 printable characters. Changing it keeps the nonce counting."
        />
        <div className={styles.row}>
          <Button type="submit" variant="secondary" disabled={busy || clientSeed.trim() === pair.clientSeed}>
            {setSeed.isPending ? 'Saving...' : 'Save Client Seed'}
          </Button>
          <Button type="button" disabled={busy} onClick={onRotate}>
            {rotate.isPending ? 'Rotating...' : 'Rotate Seed Pair'}
          </Button>
        </div>
      </form>
      {error ? <Alert>{error}</Alert> : null}
      {saved ? <Alert variant="success">Client seed saved.</Alert> : null}
      {revealed ? (
        <section className={styles.revealed} aria-label="Previous seed pair">
          <h3 className={styles.subTitle}>Previous seed pair revealed</h3>
          <dl className={styles.facts}>
            <div>
              <dt>Server seed</dt>
              <dd className={styles.mono}>{revealed.revealedServerSeed}</dd>
            </div>
            <div>
              <dt>Server seed hash</dt>
              <dd className={styles.mono}>{revealed.previousServerSeedHash}</dd>
            </div>
            <div>
              <dt>Client seed</dt>
              <dd className={styles.mono}>{revealed.previousClientSeed}</dd>
            </div>
            <div>
              <dt>Bets made (last nonce)</dt>
              <dd className={styles.mono}>{formatCount(revealed.previousNonce)}</dd>
            </div>
          </dl>
          <p className={styles.muted}>Open any of those bets under My Bets to verify it.</p>
        </section>
      ) : null}
    </div>
  );
}
