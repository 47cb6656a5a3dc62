import { useId, useState, type SubmitEvent } from 'react';
import { BetAmountField } from '@/components/ui/bet-amount-field';
import { Button } from '@/components/ui/button';
import { SliderField } from '@/components/ui/slider-field';
import { Stat } from '@/components/ui/stat';
import { GameLayout } from '@/components/layouts/game-frame';
import { useUser } from '@/lib/auth';
import { BET_DEFAULT, betRefusal, formatBetInput, GENERIC_ERROR, parseBetAmount, playError } from '@/lib/bet';
import { formatMoney, formatMultiplier } from '@/lib/format';
import { toast } from '@/lib/toast';
import { usePlayDice, type PlayDiceResult } from '../api/play-dice';
import {
  clampTarget,
  DICE_DEFAULT_TARGET,
  DICE_MAX_TARGET,
  DICE_MIN_TARGET,
  DICE_STEP,
  diceMultiplier,
  formatTarget,
  winChance,
} from '../utils/dice';
import styles from './dice.module.css';

const SCALE = [0, 25, 50, 75, 100];

/** DiceGame: pick a roll-under target, roll, and see the server's roll (SPEC.md §2 Dice). */
export function DiceGame() {
  const user = useUser().data;
  const [betText, setBetText] = useState(formatBetInput(BET_DEFAULT));
  const [target, setTarget] = useState(DICE_DEFAULT_TARGET);
  const [result, setResult] = useState<PlayDiceResult | null>(null);
  const roll = usePlayDice();
  const resultsId = useId();
  const busy = roll.isPending;

  const onSubmit = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (busy) return;
    const bet = parseBetAmount(betText);
    const problem = playError({ signedIn: Boolean(user), bet, balance: user?.balance ?? 0 });
    if (problem) {
      toast.error(problem);
      return;
    }
    roll.mutate(
      { betAmount: bet, rollTarget: target },
      {
        onSuccess: setResult,
        onError: (err) => {
          console.error('dice: roll failed', err);
          toast.error(betRefusal(err) ?? GENERIC_ERROR);
        },
      },
    );
  };

  const controls = (
    <form className={styles.controls} onSubmit={onSubmit} noValidate aria-label="Dice bet">
      <BetAmountField value={betText} onChange={setBetText} disabled={busy} />
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
        disabled={busy}
        display={formatTarget(target)}
        valueText={`Roll under ${formatTarget(target)}`}
      />
      <div className={styles.stats}>
        <Stat label="Multiplier">{formatMultiplier(diceMultiplier(target))}</Stat>
        <Stat label="Roll Under">{formatTarget(target)}</Stat>
        <Stat label="Win Chance">{`${formatTarget(winChance(target))}%`}</Stat>
      </div>
      <Button type="submit" disabled={busy} className={styles.play}>
        {busy ? 'Rolling...' : 'Roll Dice'}
      </Button>
    </form>
  );

  const rolled = result ? result.result : null;
  return (
    <GameLayout controls={controls}>
      <div className={styles.board} aria-hidden="true">
        <div className={styles.track}>
          <div className={styles.win} style={{ transform: `scaleX(${target / 100})` }} />
          <div className={styles.markerLane} style={{ transform: `translateX(${rolled ?? 0}%)` }}>
            <span
              className={`${styles.marker} ${rolled === null ? styles.markerIdle : result?.isWin ? styles.markerWin : styles.markerLoss}`}
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
