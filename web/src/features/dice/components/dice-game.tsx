import { useEffect, useId, useRef, useState, type SubmitEvent } from 'react';
import { BetAmountField } from '@/components/ui/bet-amount-field';
import { Button } from '@/components/ui/button';
import { SliderField } from '@/components/ui/slider-field';
import { Stat } from '@/components/ui/stat';
import { GameLayout } from '@/components/layouts/game-frame';
import { useBetInput } from '@/hooks/use-bet-input';
import { betRefusal, GENERIC_ERROR } from '@/lib/bet';
import { useBetReveals } from '@/lib/bet-reveals';
import { formatMoney, formatMultiplier } from '@/lib/format';
import { toast } from '@/lib/toast';
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

  const onSubmit = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (busy) return;
    const bet = takeBet();
    if (bet === null) return;
    roll.mutate(
      { betAmount: bet, rollTarget: target },
      {
        onSuccess: (res) => {
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
          // The result, the win and the balance show when the marker lands.
          landTimer.current = window.setTimeout(() => {
            reveals.reveal(ticket);
            setResult(res);
          }, DICE_ROLL_MS);
        },
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
      <Button type="submit" disabled={busy} className={styles.play} data-primary-action>
        {busy ? 'Rolling...' : 'Roll Dice'}
      </Button>
    </form>
  );

  const rolled = rolling ? rolling.result : null;
  const landed = rolling !== null && rolling === result;
  return (
    <GameLayout controls={controls}>
      <div className={styles.board} aria-hidden="true" data-testid="game-board">
        <div className={styles.track}>
          <div className={styles.win} style={{ transform: `scaleX(${target / 100})` }} />
          <div className={styles.markerLane} style={{ left: `${rolled ?? 0}%` }}>
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
