import { useState, type SubmitEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Dialog, DialogClose, DialogContent } from '@/components/ui/dialog';
import { SelectField } from '@/components/ui/select-field';
import { Spinner } from '@/components/ui/spinner';
import { TextField } from '@/components/ui/text-field';
import { errorMessage } from '@/lib/api-client';
import { formatAmount } from '@/lib/format';
import { toast } from '@/lib/toast';
import {
  useExcludeSelf,
  useLimits,
  useSetLimits,
  useTakeBreak,
  type LimitsInput,
  type PlayLimits,
} from '../api/limits';
import { CurrentPasswordField } from './current-password-field';
import styles from './settings.module.css';
import { PASSWORD_REQUIRED } from './two-factor-settings';

const PERIODS = ['day', 'week', 'month'] as const;
type Period = (typeof PERIODS)[number];
const ADJECTIVE: Record<Period, string> = { day: 'Daily', week: 'Weekly', month: 'Monthly' };

/** The server's text for a limit it cannot take, checked here first. */
export const LIMIT_INVALID = 'A limit is an amount of at least 0.01 with at most two decimal places';

const REALITY_OPTIONS = [
  { value: '0', label: 'Off' },
  { value: '15', label: 'Every 15 minutes' },
  { value: '30', label: 'Every 30 minutes' },
  { value: '60', label: 'Every hour' },
  { value: '120', label: 'Every 2 hours' },
] as const;

const BREAK_OPTIONS = [
  { value: '1', label: '1 day' },
  { value: '3', label: '3 days' },
  { value: '7', label: '1 week' },
  { value: '14', label: '2 weeks' },
  { value: '28', label: '4 weeks' },
  { value: '42', label: '6 weeks' },
] as const;

const EXCLUSION_OPTIONS = [
  { value: 'six_months', label: '6 months' },
  { value: 'permanent', label: 'Permanently' },
] as const;

/** formatWhen is a time in the player's locale, with the date. */
export function formatWhen(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? iso
    : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** parseLimit reads a limit field: '' is none, else a positive amount in whole cents (null when invalid). */
export function parseLimit(text: string): number | undefined | null {
  const t = text.trim();
  if (t === '') return undefined;
  if (!/^\d+(\.\d{1,2})?$/.test(t)) return null;
  const value = Number(t);
  return value > 0 ? value : null;
}

/** restriction is the sentence for a running break or self-exclusion, or null when the player may bet. */
export function restriction(limits: PlayLimits): string | null {
  if (limits.excludedPermanently) return 'You have excluded yourself from betting permanently.';
  if (limits.excludedUntil) return `You have excluded yourself from betting until ${formatWhen(limits.excludedUntil)}.`;
  if (limits.breakUntil) return `You are taking a break from betting until ${formatWhen(limits.breakUntil)}.`;
  return null;
}

/**
 * ResponsibleGambling is Settings' panel of the limits a player sets on their own play: loss and wager limits per
 * day, week and month (tighter at once, looser after 24 hours), the reality check, a break and self-exclusion.
 * The server enforces all of it on every bet; this panel only sets and shows it.
 */
export function ResponsibleGambling() {
  const limits = useLimits();
  let body;
  if (limits.isPending) body = <Spinner label="Loading your limits" />;
  else if (limits.isError) body = <Alert>{errorMessage(limits.error, 'Failed to load your limits')}</Alert>;
  else
    body = (
      <>
        <LimitsForm limits={limits.data} />
        <BreakForm limits={limits.data} />
      </>
    );
  return (
    <section className={styles.panel} aria-labelledby="limits-heading">
      <h2 id="limits-heading" className={styles.panelTitle}>
        Responsible Gambling
      </h2>
      {body}
    </section>
  );
}

type Fields = Record<'loss' | 'wager', Record<Period, string>>;

function fieldsOf(limits: PlayLimits): Fields {
  // A pending (looser) set is what the player last asked for: edit that.
  const source = limits.pending ?? limits;
  const text = (v: number | undefined) => (v === undefined ? '' : String(v));
  return {
    loss: { day: text(source.loss.day), week: text(source.loss.week), month: text(source.loss.month) },
    wager: { day: text(source.wager.day), week: text(source.wager.week), month: text(source.wager.month) },
  };
}

function LimitsForm({ limits }: { limits: PlayLimits }) {
  const save = useSetLimits();
  const [fields, setFields] = useState<Fields>(() => fieldsOf(limits));
  const [reality, setReality] = useState(String(limits.realityCheckMinutes));
  const [error, setError] = useState<string | null>(null);
  const stopped = restriction(limits);

  const onSubmit = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (save.isPending) return;
    const input: LimitsInput = { loss: {}, wager: {}, realityCheckMinutes: Number(reality) };
    for (const kind of ['loss', 'wager'] as const) {
      for (const period of PERIODS) {
        const value = parseLimit(fields[kind][period]);
        if (value === null) {
          setError(LIMIT_INVALID);
          return;
        }
        if (value !== undefined) input[kind][period] = value;
      }
    }
    setError(null);
    save.mutate(input, {
      onSuccess: (res) => {
        setFields(fieldsOf(res.limits));
        toast.success(res.limits.pending ? 'Saved: looser limits apply in 24 hours' : 'Limits saved');
      },
      onError: (err) => {
        setError(errorMessage(err, 'Failed to save your limits'));
      },
    });
  };

  return (
    <form className={styles.form} onSubmit={onSubmit} noValidate aria-label="Limits">
      {stopped ? <Alert>{stopped} You can still sign in, see your bets and cash out a running game.</Alert> : null}
      <p className={styles.muted}>
        Limits count per UTC day, week (from Monday) and month. A tighter limit applies at once; a looser one, or
        removing one, 24 hours after you save it. Leave a field empty for no limit.
      </p>
      {(['loss', 'wager'] as const).map((kind) => (
        <fieldset key={kind} className={styles.limitGroup}>
          <legend className={styles.limitLegend}>{kind === 'loss' ? 'Loss limits' : 'Wager limits'}</legend>
          {PERIODS.map((period, i) => {
            const usage = limits.usage[i];
            const used = usage ? (kind === 'loss' ? usage.netLoss : usage.wagered) : 0;
            return (
              <TextField
                key={period}
                label={`${ADJECTIVE[period]} ${kind} limit`}
                name={`${kind}-${period}`}
                inputMode="decimal"
                placeholder="No limit"
                hint={`${kind === 'loss' ? 'Net loss' : 'Wagered'} this ${period}: ${formatAmount(used)}`}
                value={fields[kind][period]}
                onChange={(event) => {
                  const value = event.target.value;
                  setFields((f) => ({ ...f, [kind]: { ...f[kind], [period]: value } }));
                }}
              />
            );
          })}
        </fieldset>
      ))}
      <SelectField
        label="Reality check"
        options={REALITY_OPTIONS}
        value={
          REALITY_OPTIONS.some((o) => o.value === reality)
            ? (reality as (typeof REALITY_OPTIONS)[number]['value'])
            : '0'
        }
        onChange={setReality}
      />
      {limits.pending ? (
        <p className={styles.note} role="status">
          The looser limits above apply from {formatWhen(limits.pending.from)}. Until then: {describe(limits)}.
        </p>
      ) : null}
      {error ? <Alert>{error}</Alert> : null}
      <div>
        <Button type="submit" disabled={save.isPending}>
          {save.isPending ? 'Saving...' : 'Save Limits'}
        </Button>
      </div>
    </form>
  );
}

/** describe lists the limits in force, for the pending note. */
function describe(limits: PlayLimits): string {
  const parts: string[] = [];
  for (const kind of ['loss', 'wager'] as const) {
    for (const period of PERIODS) {
      const v = limits[kind][period];
      if (v !== undefined) parts.push(`${ADJECTIVE[period].toLowerCase()} ${kind} ${formatAmount(v)}`);
    }
  }
  return parts.length > 0 ? parts.join(', ') : 'none';
}

function BreakForm({ limits }: { limits: PlayLimits }) {
  const takeBreak = useTakeBreak();
  const exclude = useExcludeSelf();
  const [days, setDays] = useState<(typeof BREAK_OPTIONS)[number]['value']>('1');
  const [duration, setDuration] = useState<(typeof EXCLUSION_OPTIONS)[number]['value']>('six_months');
  const [confirm, setConfirm] = useState<'break' | 'exclude' | null>(null);
  // A self-exclusion asks for the password: nobody can lift it, so a session alone must not start one.
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const pending = takeBreak.isPending || exclude.isPending;

  const onConfirm = () => {
    const done = {
      onSuccess: () => {
        setConfirm(null);
        setPassword('');
        toast.success(confirm === 'break' ? 'Your break has started' : 'You have excluded yourself from betting');
      },
      onError: (err: unknown) => {
        setError(errorMessage(err, 'Failed to save'));
      },
      // The exclusion's variables hold the password: the mutation keeps none of it once answered.
      onSettled: () => {
        exclude.reset();
      },
    };
    if (confirm === 'exclude' && password === '') {
      setError(PASSWORD_REQUIRED);
      return;
    }
    setError(null);
    if (confirm === 'break') takeBreak.mutate({ days: Number(days) }, done);
    else exclude.mutate({ duration, password }, done);
  };
  const breakLabel = BREAK_OPTIONS.find((o) => o.value === days)?.label ?? '';
  const exclusionLabel = EXCLUSION_OPTIONS.find((o) => o.value === duration)?.label.toLowerCase() ?? '';

  return (
    <div className={styles.form}>
      <h3 className={styles.limitLegend}>Take a break</h3>
      <p className={styles.muted}>
        Betting stops until the break ends; nobody, not even support, can end it early. Sign-in, your bets and cashing
        out a running game still work.
      </p>
      <SelectField label="Break length" options={BREAK_OPTIONS} value={days} onChange={setDays} />
      <div>
        <Button
          variant="secondary"
          onClick={() => {
            setConfirm('break');
          }}
        >
          Take a Break
        </Button>
      </div>
      <h3 className={styles.limitLegend}>Self-exclusion</h3>
      <p className={styles.muted}>
        For a longer stop: betting is refused for six months or for good, and it cannot be lifted early.
        {limits.excludedPermanently ? ' You are excluded permanently.' : ''}
      </p>
      <SelectField label="Exclude me for" options={EXCLUSION_OPTIONS} value={duration} onChange={setDuration} />
      <div>
        <Button
          variant="danger"
          onClick={() => {
            setConfirm('exclude');
          }}
        >
          Exclude Me
        </Button>
      </div>
      <Dialog
        open={confirm !== null}
        onOpenChange={(open) => {
          if (!open && !pending) {
            setConfirm(null);
            setError(null);
            setPassword('');
          }
        }}
      >
        {confirm ? (
          <DialogContent
            title={
              confirm === 'break'
                ? `Take a ${breakLabel} break?`
                : `Exclude yourself ${exclusionLabel === 'permanently' ? 'permanently' : `for ${exclusionLabel}`}?`
            }
            description="You will not be able to place bets until it ends, and it cannot be undone or shortened."
            preventOutsideClose={pending}
          >
            {confirm === 'exclude' ? <CurrentPasswordField value={password} onChange={setPassword} /> : null}
            {error ? <Alert>{error}</Alert> : null}
            <div className={styles.panelActions}>
              <DialogClose asChild>
                <Button variant="ghost" disabled={pending}>
                  Cancel
                </Button>
              </DialogClose>
              <Button variant={confirm === 'break' ? 'primary' : 'danger'} onClick={onConfirm} disabled={pending}>
                {pending ? 'Saving...' : confirm === 'break' ? 'Start the Break' : 'Exclude Me'}
              </Button>
            </div>
          </DialogContent>
        ) : null}
      </Dialog>
    </div>
  );
}
