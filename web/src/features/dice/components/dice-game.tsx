import { useEffect, useId, useRef, useState, type SubmitEvent } from 'react';
import { BetAmountField } from '@/components/ui/bet-amount-field';
import { Button } from '@/components/ui/button';
import { SliderField } from '@/components/ui/slider-field';
import { Stat } from '@/components/ui/stat';
import { GameLayout } from '@/components/layouts/game-frame';
import { useBetInput } from '@/hooks/use-bet-input';
import { useBetHotkeys } from '@/hooks/use-hotkeys';
import { Hotkeys } from '@/components/ui/hotkeys-panel';
import { betRefusal, GENERIC_ERROR } from '@/lib/bet';
import { useBetReveals } from '@/lib/bet-reveals';
import { formatMoney, formatMultiplier } from '@/lib/format';
import { toast } from '@/lib/toast';
import { BetModeTabs } from '@/components/ui/bet-mode-tabs';
import { useAutobet, type AutobetResult } from '@/hooks/use-autobet';
import { usePlayDice, type PlayDiceResult } from '../api/play-dice';
import {
  clampTarget,
  DICE_DEFAULT_TARGET,
  DICE_MAX_TARGET,
  DICE_MIN_TARGET,
  DICE_ROLL_MS,
  DICE_STEP,
  diceMultiplier,
  formatTarget,
  winChance,
} from '../utils/dice';
import styles from './dice.module.css';

const SCALE = [0, 25, 50, 75, 100];
/** DICE_AUTO_LAND_MS is the marker's shorter slide under autobet: the result still shows before the next roll. */
const DICE_AUTO_LAND_MS = 200;

/** DiceGame: pick a roll-under target, roll, and see the server's roll (SPEC.md §2 Dice). */
export function DiceGame() {
  const { betText, setBetText, takeBet } = useBetInput();
  const [target, setTarget] = useState(DICE_DEFAULT_TARGET);
  /** rolling is the roll the marker slides to; result is the one the results panel shows, once it has landed. */
  const [rolling, setRolling] = useState<PlayDiceResult | null>(null);
  const [result, setResult] = useState<PlayDiceResult | null>(null);
  const roll = usePlayDice();
  const reveals = useBetReveals('dice');
  const landTimer = useRef<number | undefined>(undefined);
  const resultsId = useId();
  const busy = roll.isPending;

  useEffect(
    () => () => {
      window.clearTimeout(landTimer.current);
    },
    [],
  );

  /**
   * play places one roll and resolves when the marker lands (the result, the win and the balance show then);
   * landMs is the slide's length, shorter under autobet. It rejects when the roll fails.
   */
  const play = async (bet: number, landMs: number): Promise<PlayDiceResult> => {
    const res = await roll.mutateAsync({ betAmount: bet, rollTarget: target });
    const ticket = reveals.arrive({
      newBalance: res.newBalance,
      settles: {
        betId: res.betId,
        amount: bet,
        multiplier: res.isWin ? res.multiplier : 0,
        payout: res.winAmount,
      },
    });
    setRolling(res);
    window.clearTimeout(landTimer.current);
    await new Promise<void>((resolve) => {
      landTimer.current = window.setTimeout(() => {
        reveals.reveal(ticket);
        setResult(res);
        resolve();
      }, landMs);
    });
    return res;
  };

  const autobet = useAutobet({
    game: 'dice',
    placeBet: async (amount): Promise<AutobetResult> => {
      const res = await play(amount, DICE_AUTO_LAND_MS);
      return { stake: amount, payout: res.winAmount };
    },
  });
  const locked = busy || autobet.running;

  const rollManual = (bet: number) => {
    play(bet, DICE_ROLL_MS).catch((err: unknown) => {
      // A refusal (a limit, the balance) is an answer, not a failure to log.
      if (betRefusal(err) === null) console.error('dice: roll failed', err);
      toast.error(betRefusal(err) ?? GENERIC_ERROR);
    });
  };

  const onSubmit = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (locked) return;
    const bet = takeBet();
    if (bet === null) return;
    if (autobet.mode === 'auto') autobet.start(bet);
    else rollManual(bet);
  };

  const hotkeys = useBetHotkeys({
    bet: () => {
      const bet = takeBet();
      if (bet !== null) rollManual(bet);
    },
    betLabel: 'Roll (Manual tab)',
    betText,
    setBetText,
    betDisabled: locked || autobet.mode !== 'manual',
    amountDisabled: locked,
  });

  const controls = (
    <form className={styles.controls} onSubmit={onSubmit} noValidate aria-label="Dice bet">
      <BetModeTabs
        autobet={autobet}
        startDisabled={busy}
        manual={
          <Button type="submit" disabled={busy} className={styles.play} data-primary-action>
            {busy ? 'Rolling...' : 'Roll Dice'}
          </Button>
        }
      >
        <BetAmountField value={betText} onChange={setBetText} disabled={locked} />
        <SliderField
          label="Roll Under"
          value={target}
          min={DICE_MIN_TARGET}
          max={DICE_MAX_TARGET}
          step={DICE_STEP}
          tone="split"
          onChange={(value) => {
            setTarget(clampTarget(value));
          }}
          disabled={locked}
          display={formatTarget(target)}
          valueText={`Roll under ${formatTarget(target)}`}
        />
        <div className={styles.stats}>
          <Stat label="Multiplier">{formatMultiplier(diceMultiplier(target))}</Stat>
          <Stat label="Roll Under">{formatTarget(target)}</Stat>
          <Stat label="Win Chance">{`${formatTarget(winChance(target))}%`}</Stat>
        </div>
      </BetModeTabs>
      <Hotkeys keys={hotkeys} />
    </form>
  );

  const rolled = rolling ? rolling.result : null;
  const landed = rolling !== null && rolling === result;
  return (
    <GameLayout controls={controls}>
      <div className={styles.board} aria-hidden="true" data-testid="game-board">
        <div className={styles.track}>
          <div className={styles.win} style={{ transform: `scaleX(${target / 100})` }} />
          <div
            className={styles.markerLane}
            style={{
              left: `${rolled ?? 0}%`,
              transitionDuration: autobet.running ? `${String(DICE_AUTO_LAND_MS)}ms` : undefined,
            }}
          >
            <span
              className={`${styles.marker} ${!landed ? styles.markerIdle : result.isWin ? styles.markerWin : styles.markerLoss}`}
            >
              {rolled === null ? '–' : rolled.toFixed(2)}
            </span>
          </div>
        </div>
        <div className={styles.scale}>
          {SCALE.map((n) => (
            <span key={n}>{n}</span>
          ))}
        </div>
      </div>
      <section className={styles.results} aria-labelledby={resultsId} aria-live="polite">
        <h2 id={resultsId} className={styles.resultsTitle}>
          Results
        </h2>
        {result ? (
          <div key={result.betId} className={styles.resultBody}>
            <p className={styles.rolled}>
              <span className={styles.rolledLabel}>Rolled</span>
              <span className={styles.rolledValue}>{result.result.toFixed(2)}</span>
            </p>
            <p className={result.isWin ? styles.outcomeWin : styles.outcomeLoss}>{result.isWin ? 'WIN!' : 'LOSE!'}</p>
            <p className={styles.amount}>
              Amount won: <strong>{formatMoney(result.winAmount)}</strong>
            </p>
          </div>
        ) : (
          <p className={styles.empty}>Place a bet and roll the dice to see your result.</p>
        )}
      </section>
    </GameLayout>
  );
}
