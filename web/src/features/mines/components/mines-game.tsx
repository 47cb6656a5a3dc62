import { useReducer, useRef, useState, type KeyboardEvent, type SubmitEvent } from 'react';
import { GameLayout } from '@/components/layouts/game-frame';
import { BetAmountField } from '@/components/ui/bet-amount-field';
import { Button } from '@/components/ui/button';
import { SliderField } from '@/components/ui/slider-field';
import { Stat } from '@/components/ui/stat';
import { useResumeGame, type ActiveMinesGame } from '@/lib/active-games';
import { useBetInput } from '@/hooks/use-bet-input';
import { useAutobet, type AutobetResult } from '@/hooks/use-autobet';
import { useBetHotkeys, type Hotkey } from '@/hooks/use-hotkeys';
import { BetModeTabs } from '@/components/ui/bet-mode-tabs';
import { Hotkeys } from '@/components/ui/hotkeys-panel';
import { betRefusal, formatBetInput, GENERIC_ERROR } from '@/lib/bet';
import { useBetReveals, type RevealFigures } from '@/lib/bet-reveals';
import { formatMoney, formatMultiplier } from '@/lib/format';
import { toast } from '@/lib/toast';
import { useCashOutMines, type CashOutMinesResult } from '../api/cash-out-mines';
import { useRevealMinesTile, type RevealTileResult } from '../api/reveal-mines-tile';
import { useStartMines, type StartMinesResult } from '../api/start-mines';
import {
  boardView,
  canReveal,
  DEFAULT_MINES,
  MAX_MINES,
  MIN_MINES,
  nextTile,
  tileKey,
  type TileView,
} from '../utils/board';
import styles from './mines.module.css';

type Status = 'idle' | 'active' | 'over';

interface Round {
  status: Status;
  gameId: string | null;
  stake: number;
  revealed: string[];
  mines: string[];
  hit: string | null;
  multiplier: number;
  potentialWin: number;
  nextMultiplier: number;
  result: { won: boolean; amount: number; multiplier: number } | null;
}

type Action =
  | { type: 'started'; res: StartMinesResult; stake: number }
  | { type: 'resumed'; game: ActiveMinesGame }
  | { type: 'revealed'; res: RevealTileResult; tile: string }
  | { type: 'cashedOut'; res: CashOutMinesResult };

const initial: Round = {
  status: 'idle',
  gameId: null,
  stake: 0,
  revealed: [],
  mines: [],
  hit: null,
  multiplier: 1,
  potentialWin: 0,
  nextMultiplier: 0,
  result: null,
};

function reducer(round: Round, action: Action): Round {
  switch (action.type) {
    case 'started':
      // A new game: the board is reset, multiplier 1 and nothing to cash out yet (SPEC.md §4).
      return {
        ...initial,
        status: 'active',
        gameId: action.res.gameId,
        stake: action.stake,
        multiplier: action.res.multiplier || 1,
        nextMultiplier: action.res.nextMultiplier,
      };
    case 'resumed':
      return {
        ...initial,
        status: 'active',
        gameId: action.game.gameId,
        stake: action.game.betAmount,
        revealed: action.game.revealed,
        multiplier: action.game.multiplier || 1,
        potentialWin: action.game.potentialWin,
        nextMultiplier: action.game.nextMultiplier,
      };
    case 'revealed': {
      const { res, tile } = action;
      if (res.hitMine) {
        return {
          ...round,
          status: 'over',
          mines: res.minePositions,
          hit: tile,
          multiplier: 0,
          potentialWin: 0,
          result: { won: false, amount: 0, multiplier: 0 },
        };
      }
      const next: Round = {
        ...round,
        revealed: res.revealed.length > 0 ? res.revealed : [...round.revealed, tile],
        multiplier: res.multiplier,
        potentialWin: res.potentialWin,
        nextMultiplier: res.nextMultiplier,
      };
      // The last gem cashes out by itself.
      if (!res.gameOver) return next;
      return {
        ...next,
        status: 'over',
        mines: res.minePositions,
        result: { won: true, amount: res.winAmount, multiplier: res.multiplier },
      };
    }
    case 'cashedOut':
      return {
        ...round,
        status: 'over',
        mines: action.res.minePositions,
        revealed: action.res.revealed.length > 0 ? action.res.revealed : round.revealed,
        multiplier: action.res.multiplier,
        result: { won: true, amount: action.res.winAmount, multiplier: action.res.multiplier },
      };
  }
}

function fail(step: string) {
  return (err: unknown) => {
    console.error(`mines: ${step} failed`, err);
    toast.error(betRefusal(err) ?? GENERIC_ERROR);
  };
}

/** MinesGame: a 5×5 board of gems and mines; reveal gems and cash out before a mine (SPEC.md §2 Mines). */
export function MinesGame() {
  const { user, betText, setBetText, takeBet } = useBetInput();
  const [mineCount, setMineCount] = useState(DEFAULT_MINES);
  const [round, dispatch] = useReducer(reducer, initial);
  const [pendingTile, setPendingTile] = useState<string | null>(null);
  // Roving tabindex: Tab enters the board on one tile, the arrow keys move between tiles.
  const [focusTile, setFocusTile] = useState(0);
  const tileButtons = useRef<(HTMLButtonElement | null)[]>([]);
  const start = useStartMines();
  const reveal = useRevealMinesTile();
  const cashOut = useCashOutMines();
  const reveals = useBetReveals('mines');
  const pending = start.isPending || reveal.isPending || cashOut.isPending;
  const active = round.status === 'active';
  /** autoTiles are the tiles autobet reveals each round, in the order the player selected them. */
  const [autoTiles, setAutoTiles] = useState<string[]>([]);

  useResumeGame('mines', Boolean(user), (game) => {
    setBetText(formatBetInput(game.betAmount));
    setMineCount(game.mineCount);
    dispatch({ type: 'resumed', game });
  });

  const onPlay = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    startManual();
  };

  const startManual = () => {
    if (pending || active || autobet.running) return;
    const bet = takeBet();
    if (bet === null) return;
    if (autobet.mode === 'auto') {
      if (autoTiles.length > 0) autobet.start(bet);
      return;
    }
    start.mutate(
      { betAmount: bet, mineCount },
      {
        onSuccess: (res) => {
          reveals.arrive({ newBalance: res.newBalance });
          dispatch({ type: 'started', res, stake: bet });
        },
        onError: fail('start'),
      },
    );
  };

  const onReveal = (tile: TileView) => {
    const gameId = round.gameId;
    if (!gameId || !canReveal({ active, pending, tile })) return;
    setPendingTile(tile.key);
    reveal.mutate(
      { gameId, row: tile.row, col: tile.col },
      {
        onSuccess: (res) => {
          // A mine, or the last gem (which cashes out), settles the game: the
          // balance and the reveal go with the tile's flip, in this render.
          let settles: RevealFigures | undefined;
          if (res.hitMine) settles = { betId: gameId, amount: round.stake, multiplier: 0, payout: 0 };
          else if (res.gameOver)
            settles = { betId: gameId, amount: round.stake, multiplier: res.multiplier, payout: res.winAmount };
          const ticket = reveals.arrive({ newBalance: res.newBalance, settles });
          dispatch({ type: 'revealed', res, tile: tileKey(tile.row, tile.col) });
          reveals.reveal(ticket);
        },
        onError: fail('reveal'),
        onSettled: () => {
          setPendingTile(null);
        },
      },
    );
  };

  const onCashOut = () => {
    const gameId = round.gameId;
    if (!gameId || pending || round.revealed.length === 0) return;
    cashOut.mutate(
      { gameId },
      {
        onSuccess: (res) => {
          const ticket = reveals.arrive({
            newBalance: res.newBalance,
            settles: { betId: gameId, amount: round.stake, multiplier: res.multiplier, payout: res.winAmount },
          });
          dispatch({ type: 'cashedOut', res });
          reveals.reveal(ticket);
        },
        onError: fail('cash out'),
      },
    );
  };

  /**
   * autoRound plays one autobet round: start with the mine count, reveal the selected tiles in order (a mine ends
   * it), cash out if all survive. Each step is the ordinary Mines call, one at a time; it resolves with the round's
   * stake and payout, and rejects when a call fails (the round, if started, stays open and can be resumed).
   */
  const autoRound = async (bet: number): Promise<AutobetResult> => {
    const started = await start.mutateAsync({ betAmount: bet, mineCount });
    reveals.arrive({ newBalance: started.newBalance });
    dispatch({ type: 'started', res: started, stake: bet });
    const gameId = started.gameId;
    for (const key of autoTiles) {
      const [row = 0, col = 0] = key.split(',').map(Number);
      setPendingTile(key);
      let res: RevealTileResult;
      try {
        res = await reveal.mutateAsync({ gameId, row, col });
      } finally {
        setPendingTile(null);
      }
      let settles: RevealFigures | undefined;
      if (res.hitMine) settles = { betId: gameId, amount: bet, multiplier: 0, payout: 0 };
      else if (res.gameOver)
        settles = { betId: gameId, amount: bet, multiplier: res.multiplier, payout: res.winAmount };
      const ticket = reveals.arrive({ newBalance: res.newBalance, settles });
      dispatch({ type: 'revealed', res, tile: key });
      reveals.reveal(ticket);
      if (res.hitMine) return { stake: bet, payout: 0 };
      if (res.gameOver) return { stake: bet, payout: res.winAmount };
    }
    const res = await cashOut.mutateAsync({ gameId });
    const ticket = reveals.arrive({
      newBalance: res.newBalance,
      settles: { betId: gameId, amount: bet, multiplier: res.multiplier, payout: res.winAmount },
    });
    dispatch({ type: 'cashedOut', res });
    reveals.reveal(ticket);
    return { stake: bet, payout: res.winAmount };
  };

  const autobet = useAutobet({ game: 'mines', placeBet: autoRound });
  const selecting = autobet.mode === 'auto' && !active && !autobet.running;

  const toggleAutoTile = (key: string) => {
    setAutoTiles((current) => (current.includes(key) ? current.filter((k) => k !== key) : [...current, key]));
  };

  const tiles = boardView({
    revealed: round.revealed,
    mines: round.mines,
    hit: round.hit,
    over: round.status === 'over',
  });
  const locked = active || pending || autobet.running;
  const manualRound = active && !autobet.running;

  /** onRandomTile reveals one random hidden tile of the round (Math.random: the server's seeds decide what it holds). */
  const onRandomTile = () => {
    if (!manualRound || pending) return;
    const hidden = tiles.filter((tile) => canReveal({ active, pending, tile }));
    const tile = hidden[Math.floor(Math.random() * hidden.length)];
    if (tile) onReveal(tile);
  };

  const onBoardKey = (event: KeyboardEvent<HTMLDivElement>) => {
    const next = nextTile(focusTile, event.key);
    if (next === null) return;
    event.preventDefault();
    setFocusTile(next);
    tileButtons.current[next]?.focus();
  };

  const hotkeys: Hotkey[] = [
    ...useBetHotkeys({
      bet: startManual,
      betLabel: 'Play (Manual tab)',
      betText,
      setBetText,
      betDisabled: locked || autobet.mode !== 'manual',
      amountDisabled: locked,
    }),
    {
      key: 'c',
      label: 'C',
      description: 'Cash out',
      run: onCashOut,
      disabled: !manualRound || pending || round.revealed.length === 0,
    },
    { key: 'r', label: 'R', description: 'Reveal a random tile', run: onRandomTile, disabled: !manualRound || pending },
  ];

  const controls = (
    <form className={styles.controls} onSubmit={onPlay} noValidate aria-label="Mines bet">
      <BetModeTabs
        autobet={autobet}
        startDisabled={locked || autoTiles.length === 0}
        autoBefore={
          <p className={styles.autoHint}>
            {autoTiles.length === 0
              ? 'Select the tiles to reveal each round on the board.'
              : `${String(autoTiles.length)} tiles selected: each round reveals them in order and cashes out if all are gems.`}
          </p>
        }
        manual={
          active ? (
            <div className={styles.roundButtons} data-primary-action>
              <Button
                variant="primary"
                className={styles.play}
                disabled={pending || round.revealed.length === 0}
                onClick={onCashOut}
              >
                {`Cash Out ${formatMoney(round.potentialWin)}`}
              </Button>
              <Button variant="secondary" disabled={pending} onClick={onRandomTile}>
                Random Tile
              </Button>
            </div>
          ) : (
            <Button type="submit" className={styles.play} disabled={pending} data-primary-action>
              {start.isPending ? 'Starting...' : 'Play'}
            </Button>
          )
        }
      >
        <BetAmountField value={betText} onChange={setBetText} disabled={locked} />
        <SliderField
          label="Mines"
          value={mineCount}
          min={MIN_MINES}
          max={MAX_MINES}
          step={1}
          onChange={setMineCount}
          disabled={locked}
          valueText={`${mineCount} mines`}
        />
        <div className={styles.stats}>
          <Stat label="Multiplier">{formatMultiplier(active || round.result ? round.multiplier : 1)}</Stat>
          <Stat label="Next Gem">
            {active && round.nextMultiplier > 0 ? formatMultiplier(round.nextMultiplier) : '–'}
          </Stat>
        </div>
      </BetModeTabs>
      <Hotkeys keys={hotkeys} />
    </form>
  );

  return (
    <GameLayout controls={controls}>
      <div className={styles.boardWrap} data-testid="game-board">
        <div className={styles.board} role="group" aria-label="Mines board" aria-busy={pending} onKeyDown={onBoardKey}>
          {tiles.map((tile, index) => {
            const clickable = selecting
              ? tile.state === 'hidden' || round.status === 'over'
              : canReveal({ active, pending, tile }) && !autobet.running;
            const chosen = autoTiles.indexOf(tile.key);
            return (
              <button
                key={tile.key}
                ref={(el) => {
                  tileButtons.current[index] = el;
                }}
                type="button"
                tabIndex={index === focusTile ? 0 : -1}
                onFocus={() => {
                  setFocusTile(index);
                }}
                className={[
                  styles.tile,
                  styles[tile.state],
                  tile.state !== 'hidden' && !tile.found && !tile.hit ? styles.dim : '',
                  tile.hit ? styles.hit : '',
                  pendingTile === tile.key ? styles.pending : '',
                  autobet.mode === 'auto' && chosen >= 0 ? styles.chosen : '',
                ].join(' ')}
                aria-label={`Row ${tile.row + 1}, column ${tile.col + 1}, ${tile.state}`}
                aria-pressed={selecting ? chosen >= 0 : undefined}
                disabled={!active && !selecting}
                aria-disabled={!clickable}
                onClick={() => {
                  if (selecting) toggleAutoTile(tile.key);
                  else if (!autobet.running) onReveal(tile);
                }}
              >
                {tile.state === 'gem' ? <GemIcon /> : tile.state === 'mine' ? <MineIcon /> : null}
              </button>
            );
          })}
        </div>
        <div className={styles.bannerSlot} aria-live="polite">
          {round.result ? (
            <div
              key={round.gameId}
              className={`${styles.banner} ${round.result.won ? styles.bannerWin : styles.bannerLoss}`}
            >
              {round.result.won ? (
                <>
                  <strong className={styles.bannerTitle}>You Won!</strong>
                  <span className={styles.bannerAmount}>{formatMoney(round.result.amount)}</span>
                  <span className={styles.bannerMultiplier}>{formatMultiplier(round.result.multiplier)}</span>
                </>
              ) : (
                <strong className={styles.bannerTitle}>Game Over</strong>
              )}
            </div>
          ) : null}
        </div>
      </div>
    </GameLayout>
  );
}

function GemIcon() {
  return (
    <svg viewBox="0 0 32 32" className={styles.icon} aria-hidden="true">
      <path d="M9 5h14l6 8-13 15L3 13z" fill="#1fd65f" />
      <path d="M3 13h26M9 5l4 8 3 15 3-15 4-8M13 13l3-8 3 8" fill="none" stroke="#0b7a35" strokeWidth="1.2" />
    </svg>
  );
}

function MineIcon() {
  return (
    <svg viewBox="0 0 32 32" className={styles.icon} aria-hidden="true">
      <path
        d="M16 3v5M16 24v5M3 16h5M24 16h5M7 7l3.5 3.5M21.5 21.5L25 25M7 25l3.5-3.5M21.5 10.5L25 7"
        stroke="#ff6b7f"
        strokeWidth="2.5"
        strokeLinecap="round"
      />
      <circle cx="16" cy="16" r="8.5" fill="#c62839" />
      <circle cx="13" cy="13" r="2.2" fill="#ffd0d6" />
    </svg>
  );
}
