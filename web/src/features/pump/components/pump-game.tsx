import { useId, useReducer, useState, type SubmitEvent } from 'react';
import { GameLayout } from '@/components/layouts/game-frame';
import { BetAmountField } from '@/components/ui/bet-amount-field';
import { Button } from '@/components/ui/button';
import { SelectField } from '@/components/ui/select-field';
import { Stat } from '@/components/ui/stat';
import { PUMP_DIFFICULTIES, type PumpDifficulty } from '@/config/game-tables';
import { useResumeGame, type ActivePumpGame } from '@/lib/active-games';
import { errorMessage } from '@/lib/api-client';
import { useBetInput } from '@/hooks/use-bet-input';
import { useBetHotkeys, type Hotkey } from '@/hooks/use-hotkeys';
import { Hotkeys } from '@/components/ui/hotkeys-panel';
import { formatBetInput } from '@/lib/bet';
import { useBetReveals, type RevealFigures } from '@/lib/bet-reveals';
import { capitalize, formatMoney, formatMultiplier } from '@/lib/format';
import { toast } from '@/lib/toast';
import { useCashOutPump, type CashOutPumpResult } from '../api/cash-out-pump';
import { usePumpBalloon, type PumpBalloonResult } from '../api/pump-balloon';
import { useStartPump, type StartPumpResult } from '../api/start-pump';
import { balloonSize, BALLOON_MAX_PX, potentialWin } from '../utils/balloon';
import styles from './pump.module.css';

const DIFFICULTY_OPTIONS = PUMP_DIFFICULTIES.map((value) => ({
  value,
  label: capitalize(value),
}));

type Status = 'idle' | 'active' | 'burst' | 'won';

interface Round {
  status: Status;
  gameId: string | null;
  stake: number;
  pumps: number;
  multiplier: number;
  winAmount: number;
}

type Action =
  | { type: 'started'; res: StartPumpResult; stake: number }
  | { type: 'resumed'; game: ActivePumpGame }
  | { type: 'pumped'; res: PumpBalloonResult }
  | { type: 'cashedOut'; res: CashOutPumpResult };

const initial: Round = { status: 'idle', gameId: null, stake: 0, pumps: 0, multiplier: 1, winAmount: 0 };

function reducer(round: Round, action: Action): Round {
  switch (action.type) {
    case 'started':
      return { ...initial, status: 'active', gameId: action.res.gameId, stake: action.stake };
    case 'resumed':
      return {
        ...initial,
        status: 'active',
        gameId: action.game.gameId,
        stake: action.game.betAmount,
        pumps: action.game.pumpCount,
        multiplier: action.game.multiplier || 1,
      };
    case 'pumped': {
      const { res } = action;
      if (res.burst) return { ...round, status: 'burst', winAmount: 0 };
      const pumped = { ...round, pumps: res.pumpCount, multiplier: res.multiplier };
      // The last possible pump cashes out by itself.
      return res.gameOver ? { ...pumped, status: 'won', winAmount: res.winAmount } : pumped;
    }
    case 'cashedOut':
      return {
        ...round,
        status: 'won',
        winAmount: action.res.winAmount,
        multiplier: action.res.multiplier || round.multiplier,
        pumps: action.res.pumpCount || round.pumps,
      };
  }
}

function failed(fallback: string) {
  return (err: unknown) => {
    console.error(`pump: ${fallback}`, err);
    toast.error(errorMessage(err, fallback));
  };
}

/** PumpGame: pump the balloon for a growing multiplier and cash out before it bursts (SPEC.md §2 Pump). */
export function PumpGame() {
  const { user, betText, setBetText, takeBet } = useBetInput();
  const [difficulty, setDifficulty] = useState<PumpDifficulty>('medium');
  const [round, dispatch] = useReducer(reducer, initial);
  const start = useStartPump();
  const pump = usePumpBalloon();
  const cashOut = useCashOutPump();
  const reveals = useBetReveals('pump');
  const statusId = useId();
  const pending = start.isPending || pump.isPending || cashOut.isPending;
  const active = round.status === 'active';
  const locked = active || pending;

  useResumeGame('pump', Boolean(user), (game) => {
    setBetText(formatBetInput(game.betAmount));
    const known = PUMP_DIFFICULTIES.find((d) => d === game.difficulty);
    if (known) setDifficulty(known);
    dispatch({ type: 'resumed', game });
  });

  const onStart = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    startGame();
  };

  const startGame = () => {
    if (locked) return;
    const bet = takeBet();
    if (bet === null) return;
    start.mutate(
      { betAmount: bet, difficulty },
      {
        onSuccess: (res) => {
          reveals.arrive({ newBalance: res.newBalance });
          dispatch({ type: 'started', res, stake: bet });
        },
        onError: failed('Failed to start game'),
      },
    );
  };

  const onPump = () => {
    const gameId = round.gameId;
    if (!gameId || pending || !active) return;
    pump.mutate(
      { gameId },
      {
        onSuccess: (res) => {
          // A burst or the last possible pump settles the game, shown with the
          // balloon's animation in this render. A burst may carry no
          // newBalance (SPEC.md §7: update only if given): the ledger then
          // keeps the balance shown.
          let settles: RevealFigures | undefined;
          if (res.burst) settles = { betId: gameId, amount: round.stake, multiplier: 0, payout: 0 };
          else if (res.gameOver)
            settles = { betId: gameId, amount: round.stake, multiplier: res.multiplier, payout: res.winAmount };
          const ticket = reveals.arrive({ newBalance: res.newBalance, settles });
          dispatch({ type: 'pumped', res });
          reveals.reveal(ticket);
        },
        onError: failed('Failed to pump balloon'),
      },
    );
  };

  const onCashOut = () => {
    const gameId = round.gameId;
    if (!gameId || pending || !active) return;
    cashOut.mutate(
      { gameId },
      {
        onSuccess: (res) => {
          const ticket = reveals.arrive({
            newBalance: res.newBalance,
            settles: {
              betId: gameId,
              amount: round.stake,
              multiplier: res.multiplier || round.multiplier,
              payout: res.winAmount,
            },
          });
          dispatch({ type: 'cashedOut', res });
          reveals.reveal(ticket);
        },
        onError: failed('Failed to cash out'),
      },
    );
  };

  const hotkeys: Hotkey[] = [
    ...useBetHotkeys({
      bet: startGame,
      betLabel: 'Start a game',
      betText,
      setBetText,
      betDisabled: locked,
      amountDisabled: locked,
    }),
    { key: 'p', label: 'P', description: 'Pump', run: onPump, disabled: !active || pending },
    {
      key: 'c',
      label: 'C',
      description: 'Cash out',
      run: onCashOut,
      disabled: !active || pending || round.pumps === 0,
    },
  ];

  const controls = (
    <form className={styles.controls} onSubmit={onStart} noValidate aria-label="Pump bet">
      <BetAmountField value={betText} onChange={setBetText} disabled={locked} />
      <SelectField
        label="Difficulty"
        options={DIFFICULTY_OPTIONS}
        value={difficulty}
        onChange={setDifficulty}
        disabled={locked}
      />
      {active ? (
        <div className={styles.actions} data-primary-action>
          <Button className={styles.play} disabled={pending} onClick={onPump}>
            Pump
          </Button>
          <Button
            variant="secondary"
            className={styles.play}
            disabled={pending || round.pumps === 0}
            onClick={onCashOut}
          >
            Cash Out
          </Button>
        </div>
      ) : (
        <Button type="submit" className={styles.play} disabled={pending} data-primary-action>
          {start.isPending ? 'Starting...' : 'Start Game'}
        </Button>
      )}
      <Hotkeys keys={hotkeys} />
    </form>
  );

  const size = balloonSize(round.pumps);
  return (
    <GameLayout controls={controls}>
      <div className={styles.sky} aria-hidden="true" data-testid="game-board">
        <div
          key={round.status === 'burst' ? `burst-${round.gameId ?? ''}` : 'balloon'}
          className={`${styles.balloon} ${round.status === 'burst' ? styles.burst : ''}`}
          style={{ transform: `scale(${size / BALLOON_MAX_PX})` }}
          data-size={size}
        >
          <svg viewBox="0 0 100 124" className={styles.balloonSvg}>
            <ellipse cx="50" cy="50" rx="46" ry="50" className={styles.balloonBody} />
            <ellipse cx="34" cy="30" rx="9" ry="14" fill="rgb(255 255 255 / 35%)" />
            <path d="M44 99l6 8 6-8z" className={styles.balloonBody} />
            <path d="M50 107c-4 5 4 9 0 16" fill="none" stroke="#b1bad3" strokeWidth="1.5" />
          </svg>
        </div>
      </div>
      <section className={styles.status} aria-labelledby={statusId}>
        <h2 id={statusId} className={styles.statusTitle}>
          Balloon Status
        </h2>
        <div className={styles.stats}>
          <Stat label="Pumps">{round.pumps}</Stat>
          <Stat label="Multiplier">{formatMultiplier(round.multiplier)}</Stat>
        </div>
        <div className={styles.message} aria-live="polite">
          {round.status === 'idle' ? <p className={styles.idle}>Place your bet and start pumping</p> : null}
          {active ? (
            <p>
              Potential win:{' '}
              <strong className={styles.money}>{formatMoney(potentialWin(round.stake, round.multiplier))}</strong>
            </p>
          ) : null}
          {round.status === 'burst' ? (
            <p className={styles.lost}>
              Balloon Burst! <span className={styles.burstWin}>{`Win: ${formatMoney(0)}`}</span>
            </p>
          ) : null}
          {round.status === 'won' ? (
            <p className={styles.won}>{`Success! You won ${formatMoney(round.winAmount)}`}</p>
          ) : null}
        </div>
      </section>
    </GameLayout>
  );
}
