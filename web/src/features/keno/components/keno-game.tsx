import { useEffect, useId, useRef, useState, type SubmitEvent } from 'react';
import { GameLayout } from '@/components/layouts/game-frame';
import { BetAmountField } from '@/components/ui/bet-amount-field';
import { Button } from '@/components/ui/button';
import { ToggleGroup } from '@/components/ui/toggle-group';
import { KENO_MAX_PICKS, KENO_NUMBERS, KENO_RISKS, type KenoRisk } from '@/config/keno-payouts';
import { useBetInput } from '@/hooks/use-bet-input';
import { useAutobet, type AutobetResult } from '@/hooks/use-autobet';
import { useBetHotkeys, type Hotkey } from '@/hooks/use-hotkeys';
import { BetModeTabs } from '@/components/ui/bet-mode-tabs';
import { Hotkeys } from '@/components/ui/hotkeys-panel';
import { betRefusal, GENERIC_ERROR } from '@/lib/bet';
import { useBetReveals } from '@/lib/bet-reveals';
import { capitalize, formatMoney, formatMultiplier } from '@/lib/format';
import { toast } from '@/lib/toast';
import { usePlayKeno, type PlayKenoResult } from '../api/play-keno';
import { autoPick, revealDelay, revealDuration, togglePick } from '../utils/keno';
import styles from './keno.module.css';
import { PayoutTable } from './payout-table';

const RISK_OPTIONS = KENO_RISKS.map((value) => ({ value, label: capitalize(value) }));
const NUMBERS = Array.from({ length: KENO_NUMBERS }, (_, i) => i + 1);

/** setup: choosing numbers; after: a draw is shown (numbers locked); edit: changing the numbers after a draw. */
type Mode = 'setup' | 'after' | 'edit';
/** idle: nothing running; drawing: the request is in flight; reveal: the drawn numbers are flipping. */
type Phase = 'idle' | 'drawing' | 'reveal';

/** KenoGame: pick up to 10 of 40 numbers, draw 10, and get paid by the hits (SPEC.md §2 Keno). */
export function KenoGame() {
  const { betText, setBetText, takeBet } = useBetInput();
  const [pickCount, setPickCount] = useState(String(KENO_MAX_PICKS));
  const [risk, setRisk] = useState<KenoRisk>('classic');
  const [picks, setPicks] = useState<number[]>([]);
  const [savedPicks, setSavedPicks] = useState<number[]>([]);
  const [mode, setMode] = useState<Mode>('setup');
  const [phase, setPhase] = useState<Phase>('idle');
  const [round, setRound] = useState<PlayKenoResult | null>(null);
  const revealTimer = useRef<number | undefined>(undefined);
  const play = usePlayKeno();
  const reveals = useBetReveals('keno');
  const resultId = useId();
  const pickCountId = useId();

  useEffect(
    () => () => {
      window.clearTimeout(revealTimer.current);
    },
    [],
  );

  /**
   * drawOnce plays one round with the current numbers and resolves when the last number has flipped (the balance
   * and the result show then); it rejects when the draw fails, after resetting the round (SPEC.md §8).
   */
  const drawOnce = async (bet: number): Promise<PlayKenoResult> => {
    setPhase('drawing');
    setRound(null);
    let res: PlayKenoResult;
    try {
      res = await play.mutateAsync({ betAmount: bet, selectedNumbers: picks, riskLevel: risk });
    } catch (err) {
      // The round state resets (SPEC.md §8); the selection stays.
      setRound(null);
      setMode('setup');
      setPhase('idle');
      throw err;
    }
    const ticket = reveals.arrive({
      newBalance: res.newBalance,
      settles: { betId: res.betId, amount: bet, multiplier: res.multiplier, payout: res.winAmount },
    });
    setRound(res);
    setMode('after');
    setPhase('reveal');
    window.clearTimeout(revealTimer.current);
    // The balance and the result show after the last flip.
    await new Promise<void>((resolve) => {
      revealTimer.current = window.setTimeout(() => {
        reveals.reveal(ticket);
        setPhase('idle');
        resolve();
      }, revealDuration(res.drawnNumbers.length));
    });
    return res;
  };

  const autobet = useAutobet({
    game: 'keno',
    placeBet: async (amount): Promise<AutobetResult> => {
      const res = await drawOnce(amount);
      return { stake: amount, payout: res.winAmount };
    },
  });

  const busy = phase !== 'idle' || autobet.running;
  const locked = busy || mode === 'after';
  const showDraw = mode === 'after' && round !== null;

  const draw = () => {
    if (busy) return;
    const bet = takeBet({ picks: picks.length });
    if (bet === null) return;
    drawOnce(bet).catch((err: unknown) => {
      // A refusal (a limit, the balance) is an answer, not a failure to log.
      if (betRefusal(err) === null) console.error('keno: draw failed', err);
      toast.error(betRefusal(err) ?? GENERIC_ERROR);
    });
  };

  const onSubmit = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (autobet.mode === 'manual') {
      draw();
      return;
    }
    if (busy) return;
    const bet = takeBet({ picks: picks.length });
    if (bet !== null) autobet.start(bet);
  };

  const count = Number(pickCount);
  const countValid = Number.isInteger(count) && count >= 1 && count <= KENO_MAX_PICKS;
  /** pickFresh replaces the selection (after a draw too: the shown round is put away first). */
  const pickFresh = (next: number[]) => {
    if (busy) return;
    setPicks(next);
    if (mode !== 'setup') {
      setRound(null);
      setMode('setup');
    }
  };
  const onAutoPick = () => {
    if (countValid) pickFresh(autoPick(count));
  };
  const onClear = () => {
    pickFresh([]);
  };

  const onPick = (n: number) => {
    if (locked) return;
    setPicks((current) => togglePick(current, n));
  };

  const finished = showDraw && phase === 'idle';
  const matches = new Set(round?.matches ?? []);
  const drawnOrder = new Map((round?.drawnNumbers ?? []).map((n, i) => [n, i]));

  let buttons;
  if (mode === 'after') {
    buttons = (
      <>
        <Button type="submit" className={styles.wide} disabled={busy}>
          {phase === 'drawing' ? 'Drawing...' : 'Play Again'}
        </Button>
        <Button
          variant="secondary"
          disabled={busy}
          onClick={() => {
            setSavedPicks(picks);
            setMode('edit');
          }}
        >
          Edit
        </Button>
        <Button
          variant="secondary"
          disabled={busy}
          onClick={() => {
            setPicks([]);
            setRound(null);
            setMode('setup');
          }}
        >
          Reset
        </Button>
      </>
    );
  } else {
    buttons = (
      <>
        <Button type="submit" className={styles.wide} disabled={busy}>
          {phase === 'drawing' ? 'Drawing...' : mode === 'edit' ? 'Play With Selected Numbers' : 'Draw Numbers'}
        </Button>
        {mode === 'edit' ? (
          <Button
            variant="secondary"
            disabled={busy}
            onClick={() => {
              setPicks(savedPicks);
              setMode('after');
            }}
          >
            Cancel
          </Button>
        ) : null}
      </>
    );
  }

  const hotkeys: Hotkey[] = [
    ...useBetHotkeys({
      bet: draw,
      betLabel: 'Draw (Manual tab)',
      betText,
      setBetText,
      betDisabled: busy || autobet.mode !== 'manual',
      amountDisabled: busy,
    }),
    { key: 'r', label: 'R', description: 'Auto pick', run: onAutoPick, disabled: busy || !countValid },
    { key: 'x', label: 'X', description: 'Clear the numbers', run: onClear, disabled: busy },
  ];

  const controls = (
    <form className={styles.controls} onSubmit={onSubmit} noValidate aria-label="Keno bet">
      <BetModeTabs
        autobet={autobet}
        startDisabled={busy}
        manual={
          <div className={styles.buttons} data-primary-action>
            {buttons}
          </div>
        }
      >
        <BetAmountField value={betText} onChange={setBetText} disabled={busy} />
        <ToggleGroup label="Risk Level" options={RISK_OPTIONS} value={risk} onChange={setRisk} disabled={busy} />
        <div className={styles.pickRow}>
          <div className={styles.pickCount}>
            <label htmlFor={pickCountId}>Pick Count</label>
            <input
              id={pickCountId}
              type="number"
              inputMode="numeric"
              min={1}
              max={KENO_MAX_PICKS}
              step={1}
              value={pickCount}
              disabled={busy}
              aria-invalid={countValid ? undefined : true}
              onChange={(event) => {
                setPickCount(event.target.value);
              }}
            />
          </div>
          <Button variant="secondary" disabled={busy || !countValid} onClick={onAutoPick}>
            Auto Pick
          </Button>
          <Button variant="secondary" disabled={busy || picks.length === 0} onClick={onClear}>
            Clear
          </Button>
        </div>
      </BetModeTabs>
      <Hotkeys keys={hotkeys} />
    </form>
  );

  return (
    <GameLayout
      controls={controls}
      below={<PayoutTable risk={risk} picks={picks.length} hits={finished ? round.matches.length : null} />}
    >
      <div className={styles.boardHead}>
        <p className={styles.counter}>
          Selected <strong>{`${picks.length}/${KENO_MAX_PICKS}`}</strong>
        </p>
        <p id={resultId} className={styles.result} aria-live="polite">
          {finished ? (
            round.winAmount > 0 ? (
              <span className={styles.win}>{`Win: ${formatMoney(round.winAmount)}`}</span>
            ) : (
              <span className={styles.noWin}>No win</span>
            )
          ) : null}
          {finished ? (
            <span className={styles.hits}>
              {`${round.matches.length} of ${round.drawnNumbers.length} hit · ${formatMultiplier(round.multiplier)}`}
            </span>
          ) : null}
        </p>
      </div>
      <div
        className={styles.board}
        role="group"
        aria-label="Keno numbers"
        aria-describedby={resultId}
        data-testid="game-board"
      >
        {NUMBERS.map((n) => {
          const selected = picks.includes(n);
          const order = showDraw ? drawnOrder.get(n) : undefined;
          const drawn = order !== undefined;
          const className = [
            styles.cell,
            selected ? styles.selected : '',
            drawn ? styles.drawn : '',
            drawn ? (matches.has(n) ? styles.match : styles.miss) : '',
            drawn && phase === 'reveal' ? styles.flipping : '',
          ].join(' ');
          return (
            <button
              key={n}
              type="button"
              className={className}
              style={drawn && phase === 'reveal' ? { animationDelay: `${String(revealDelay(order))}ms` } : undefined}
              aria-pressed={selected}
              aria-disabled={locked || (!selected && picks.length >= KENO_MAX_PICKS)}
              onClick={() => {
                onPick(n);
              }}
            >
              {n}
            </button>
          );
        })}
      </div>
    </GameLayout>
  );
}
