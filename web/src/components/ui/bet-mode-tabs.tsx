import { useId, useState, type ReactNode } from 'react';
import { Button } from '@/components/ui/button';
import { Tabs, TabsContent, TabsList, TabsTrigger } from '@/components/ui/tabs';
import { ToggleGroup } from '@/components/ui/toggle-group';
import { formatMoney } from '@/lib/format';
import type { Autobet, BetMode } from '@/hooks/use-autobet';
import { MAX_BETS, MAX_PERCENT, type AutobetSettings, type OnResult } from '@/lib/autobet';
import styles from './bet-mode-tabs.module.css';

export interface BetModeTabsProps {
  autobet: Autobet;
  /** children are the fields both tabs share: the bet amount and the game's options. */
  children: ReactNode;
  /** manual is the Manual tab's play button (data-primary-action). */
  manual: ReactNode;
  /** autoBefore is shown at the top of the Auto tab, e.g. Mines' "select the tiles" hint. */
  autoBefore?: ReactNode;
  /** startDisabled keeps Start Autobet disabled, e.g. while a manual bet is in flight. */
  startDisabled?: boolean;
}

/**
 * BetModeTabs is a game's bet panel with its Manual and Auto tabs. The form around it submits: in the Auto tab,
 * Start Autobet is its submit button (the game's onSubmit starts the run), Stop Autobet a plain button. While a run
 * goes on the Manual tab is disabled and the autobet fields are read-only.
 */
export function BetModeTabs({ autobet, children, manual, autoBefore, startDisabled }: BetModeTabsProps) {
  const { running } = autobet;
  return (
    <Tabs
      value={autobet.mode}
      onValueChange={(value) => {
        autobet.setMode(value as BetMode);
      }}
      className={styles.tabs}
    >
      <TabsList aria-label="Bet mode" className={styles.list}>
        <TabsTrigger value="manual" disabled={running}>
          Manual
        </TabsTrigger>
        <TabsTrigger value="auto">Auto</TabsTrigger>
      </TabsList>
      {children}
      <TabsContent value="manual" className={styles.content}>
        {manual}
      </TabsContent>
      <TabsContent value="auto" className={styles.content}>
        {autoBefore}
        <AutobetFields autobet={autobet} />
        {running ? (
          <Button type="button" className={styles.play} data-primary-action onClick={autobet.stop}>
            Stop Autobet
          </Button>
        ) : (
          <Button type="submit" className={styles.play} data-primary-action disabled={startDisabled}>
            Start Autobet
          </Button>
        )}
        <AutobetStatus autobet={autobet} />
      </TabsContent>
    </Tabs>
  );
}

function AutobetStatus({ autobet }: { autobet: Autobet }) {
  const { progress, message } = autobet;
  return (
    <div className={styles.status} role="status" aria-live="polite">
      {progress ? (
        <p className={styles.counter}>
          <span data-testid="autobet-count">
            {progress.count} / {progress.bets > 0 ? progress.bets : '∞'} bets
          </span>
          <span className={progress.net < 0 ? styles.loss : progress.net > 0 ? styles.win : undefined}>
            Net {progress.net > 0 ? '+' : ''}
            {formatMoney(progress.net)}
          </span>
        </p>
      ) : null}
      {message && !autobet.running ? <p className={styles.message}>{message}</p> : null}
    </div>
  );
}

type Field = 'bets' | 'winPercent' | 'lossPercent' | 'stopProfit' | 'stopLoss' | 'stopWinAbove';

function percentOf(rule: OnResult): number {
  return rule.mode === 'increase' ? rule.percent : 0;
}

function texts(s: AutobetSettings): Record<Field, string> {
  const t = (n: number) => (n === 0 ? '' : String(n));
  return {
    bets: String(s.bets),
    winPercent: t(percentOf(s.onWin)),
    lossPercent: t(percentOf(s.onLoss)),
    stopProfit: t(s.stopProfit),
    stopLoss: t(s.stopLoss),
    stopWinAbove: t(s.stopWinAbove),
  };
}

/** parseField reads a field's text: empty is 0; null when it is not a number in range. */
function parseField(text: string, max: number, integer = false): number | null {
  if (text.trim() === '') return 0;
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0 || n > max) return null;
  if (integer && !Number.isInteger(n)) return null;
  return Math.round(n * 100) / 100;
}

const MAX_AMOUNT = 1e9;

function AutobetFields({ autobet }: { autobet: Autobet }) {
  const { settings, setSettings, running } = autobet;
  const [text, setText] = useState(() => texts(settings));
  const [invalid, setInvalid] = useState<Partial<Record<Field, boolean>>>({});

  const change = (field: Field, value: string) => {
    setText((t) => ({ ...t, [field]: value }));
    const max = field === 'bets' ? MAX_BETS : field.endsWith('Percent') ? MAX_PERCENT : MAX_AMOUNT;
    const n = parseField(value, max, field === 'bets');
    setInvalid((v) => ({ ...v, [field]: n === null }));
    if (n === null) return;
    const next = { ...settings };
    if (field === 'winPercent' && next.onWin.mode === 'increase') next.onWin = { mode: 'increase', percent: n };
    else if (field === 'lossPercent' && next.onLoss.mode === 'increase') next.onLoss = { mode: 'increase', percent: n };
    else if (field === 'bets' || field === 'stopProfit' || field === 'stopLoss' || field === 'stopWinAbove')
      next[field] = n;
    setSettings(next);
  };

  const mode = (which: 'onWin' | 'onLoss', value: 'reset' | 'increase') => {
    const field = which === 'onWin' ? 'winPercent' : 'lossPercent';
    const percent = parseField(text[field], MAX_PERCENT) ?? 0;
    setSettings({ ...settings, [which]: value === 'reset' ? { mode: 'reset' } : { mode: 'increase', percent } });
  };

  return (
    <div className={styles.fields}>
      <NumberField
        label="Number of Bets"
        hint="0 for no limit"
        value={text.bets}
        invalid={invalid.bets}
        step="1"
        disabled={running}
        onChange={(v) => {
          change('bets', v);
        }}
      />
      {(['onWin', 'onLoss'] as const).map((which) => {
        const field = which === 'onWin' ? 'winPercent' : 'lossPercent';
        const name = which === 'onWin' ? 'Win' : 'Loss';
        return (
          <div key={which} className={styles.onResult}>
            <ToggleGroup
              label={`On ${name}`}
              options={[
                { value: 'reset', label: 'Reset' },
                { value: 'increase', label: 'Increase' },
              ]}
              value={settings[which].mode}
              disabled={running}
              onChange={(value) => {
                mode(which, value);
              }}
            />
            <NumberField
              label={`Increase on ${name} by %`}
              value={text[field]}
              invalid={invalid[field]}
              step="1"
              disabled={running || settings[which].mode === 'reset'}
              onChange={(v) => {
                change(field, v);
              }}
            />
          </div>
        );
      })}
      <NumberField
        label="Stop on Profit"
        hint="Net profit, $; empty for none"
        value={text.stopProfit}
        invalid={invalid.stopProfit}
        disabled={running}
        onChange={(v) => {
          change('stopProfit', v);
        }}
      />
      <NumberField
        label="Stop on Loss"
        hint="Net loss, $; empty for none"
        value={text.stopLoss}
        invalid={invalid.stopLoss}
        disabled={running}
        onChange={(v) => {
          change('stopLoss', v);
        }}
      />
      <NumberField
        label="Stop on Single Win Above"
        hint="One payout above this, $; empty for none"
        value={text.stopWinAbove}
        invalid={invalid.stopWinAbove}
        disabled={running}
        onChange={(v) => {
          change('stopWinAbove', v);
        }}
      />
      <p className={styles.rules}>
        A win is a payout above the stake. Increase multiplies the last bet, to the nearest cent. Stops are checked
        after each bet; a bet above your balance is never placed.
      </p>
    </div>
  );
}

interface NumberFieldProps {
  label: string;
  hint?: string;
  value: string;
  invalid?: boolean;
  step?: string;
  disabled?: boolean;
  onChange: (value: string) => void;
}

function NumberField({ label, hint, value, invalid, step = '0.01', disabled, onChange }: NumberFieldProps) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const parts = [hint ? hintId : '', invalid ? errorId : ''].filter(Boolean);
  const described = parts.length > 0 ? parts.join(' ') : undefined;
  return (
    <div className={styles.field}>
      <label className={styles.label} htmlFor={id}>
        {label}
      </label>
      <input
        id={id}
        className={styles.input}
        type="number"
        inputMode="decimal"
        min="0"
        step={step}
        value={value}
        disabled={disabled}
        aria-invalid={invalid ? true : undefined}
        aria-describedby={described}
        onChange={(event) => {
          onChange(event.target.value);
        }}
      />
      {hint ? (
        <span id={hintId} className={styles.hint}>
          {hint}
        </span>
      ) : null}
      {invalid ? (
        <span id={errorId} className={styles.error}>
          Please enter a number from 0
        </span>
      ) : null}
    </div>
  );
}
