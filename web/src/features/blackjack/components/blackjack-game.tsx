import { useEffect, useRef, useState, type SubmitEvent } from 'react';
import { GameLayout } from '@/components/layouts/game-frame';
import { BetAmountField } from '@/components/ui/bet-amount-field';
import { Button } from '@/components/ui/button';
import { useResumeGame } from '@/lib/active-games';
import { useUser } from '@/lib/auth';
import {
  BET_DEFAULT,
  betRefusal,
  formatBetInput,
  GENERIC_ERROR,
  parseBetAmount,
  PLAY_MESSAGES,
  playError,
} from '@/lib/bet';
import { useBetReveals, type RevealFigures } from '@/lib/bet-reveals';
import { formatMoney } from '@/lib/format';
import { toast } from '@/lib/toast';
import { useDoubleBlackjack } from '../api/double-blackjack';
import { useHitBlackjack } from '../api/hit-blackjack';
import { useStandBlackjack } from '../api/stand-blackjack';
import { useStartBlackjack } from '../api/start-blackjack';
import {
  canDoubleDown,
  DEAL_STEP_MS,
  DEALER_CARD_MS,
  DEALER_REVEAL_DELAY_MS,
  handTotal,
  resultTone,
  type Card,
} from '../utils/hand';
import styles from './blackjack.module.css';
import { Hand } from './playing-card';

type Phase = 'betting' | 'dealing' | 'playing' | 'dealerTurn' | 'gameOver';

interface Table {
  phase: Phase;
  gameId: string | null;
  stake: number;
  player: Card[];
  dealer: Card[];
  /** playerShown, dealerSlots and dealerFaceUp pace the animations: cards on the table, and how many face up. */
  playerShown: number;
  dealerSlots: number;
  dealerFaceUp: number;
  result: string;
  winAmount: number;
  /** balanceAtDeal is the balance right after the stake, which must cover a second bet to double. */
  balanceAtDeal: number;
  canDouble: boolean;
}

const empty: Table = {
  phase: 'betting',
  gameId: null,
  stake: 0,
  player: [],
  dealer: [],
  playerShown: 0,
  dealerSlots: 0,
  dealerFaceUp: 0,
  result: '',
  winAmount: 0,
  balanceAtDeal: 0,
  canDouble: false,
};

const HIDDEN: Card = { hidden: true };

function isTyping(target: EventTarget | null): boolean {
  return (
    target instanceof HTMLElement &&
    (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName))
  );
}

/** BlackjackGame: deal, then hit, stand or double against the dealer (SPEC.md §2, §4 Blackjack). */
export function BlackjackGame() {
  const user = useUser().data;
  const [betText, setBetText] = useState(formatBetInput(BET_DEFAULT));
  const [table, setTable] = useState<Table>(empty);
  const timers = useRef<number[]>([]);
  const start = useStartBlackjack();
  const hit = useHitBlackjack();
  const stand = useStandBlackjack();
  const double = useDoubleBlackjack();
  const reveals = useBetReveals('blackjack');
  const pending = start.isPending || hit.isPending || stand.isPending || double.isPending;

  const schedule = (fn: () => void, ms: number) => {
    timers.current.push(window.setTimeout(fn, ms));
  };
  const clearTimers = () => {
    timers.current.forEach((t) => {
      window.clearTimeout(t);
    });
    timers.current = [];
  };
  useEffect(
    () => () => {
      timers.current.forEach((t) => {
        window.clearTimeout(t);
      });
    },
    [],
  );

  useResumeGame('blackjack', Boolean(user), (game) => {
    setBetText(formatBetInput(game.betAmount));
    setTable({
      ...empty,
      phase: 'playing',
      gameId: game.gameId,
      stake: game.betAmount,
      player: game.playerHand,
      dealer: game.dealerHand,
      playerShown: game.playerHand.length,
      dealerSlots: game.dealerHand.length,
      dealerFaceUp: game.dealerHand.length,
      balanceAtDeal: user?.balance ?? 0,
      canDouble: game.canDouble,
    });
  });

  /**
   * settled are the figures of the game a response ends: the whole stake (a
   * double's included) and the payout.
   */
  const settled = (gameId: string, stake: number, winAmount: number): RevealFigures => ({
    betId: gameId,
    amount: stake,
    multiplier: stake > 0 ? Math.round((winAmount / stake) * 100) / 100 : 0,
    payout: winAmount,
  });

  /**
   * revealDealer turns the dealer's cards over one at a time (600 ms, then 400 ms
   * apart), then shows the result; the balance and the reveal (ticket) go with it.
   */
  const revealDealer = (dealer: Card[], result: string, winAmount: number, ticket: number) => {
    setTable((t) => ({ ...t, phase: 'dealerTurn', dealer, dealerSlots: Math.max(2, t.dealerSlots), dealerFaceUp: 1 }));
    for (let k = 1; k < dealer.length; k++) {
      schedule(
        () => {
          setTable((t) => ({ ...t, dealerFaceUp: k + 1, dealerSlots: Math.max(t.dealerSlots, k + 1) }));
        },
        DEALER_REVEAL_DELAY_MS + (k - 1) * DEALER_CARD_MS,
      );
    }
    schedule(
      () => {
        reveals.reveal(ticket);
        setTable((t) => ({
          ...t,
          phase: 'gameOver',
          dealerSlots: dealer.length,
          dealerFaceUp: dealer.length,
          result,
          winAmount,
        }));
      },
      DEALER_REVEAL_DELAY_MS + Math.max(0, dealer.length - 1) * DEALER_CARD_MS,
    );
  };

  const failed = (step: string) => (err: unknown) => {
    console.error(`blackjack: ${step} failed`, err);
    toast.error(betRefusal(err) ?? GENERIC_ERROR);
  };

  const onDeal = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (pending || table.phase !== 'betting') return;
    const bet = parseBetAmount(betText);
    const problem = playError({ signedIn: Boolean(user), bet, balance: user?.balance ?? 0 });
    if (problem) {
      toast.error(problem);
      return;
    }
    start.mutate(
      { betAmount: bet },
      {
        onSuccess: (res) => {
          clearTimers();
          // A natural ends the game at the deal: its result shows with the last dealt card.
          const ticket = reveals.arrive({
            newBalance: res.newBalance,
            settles: res.gameOver ? settled(res.gameId, bet, res.winAmount) : undefined,
          });
          // Dealer's first card, player's first, the dealer's hand, the player's hand: 250 ms apart.
          setTable({
            ...empty,
            phase: 'dealing',
            gameId: res.gameId,
            stake: bet,
            player: res.playerHand,
            dealer: res.dealerHand,
            dealerSlots: 1,
            dealerFaceUp: 1,
            balanceAtDeal: res.newBalance - (res.gameOver ? res.winAmount : 0),
            canDouble: res.canDouble,
          });
          schedule(() => {
            setTable((t) => ({ ...t, playerShown: 1 }));
          }, DEAL_STEP_MS);
          schedule(() => {
            setTable((t) => ({ ...t, dealerSlots: t.dealer.length, dealerFaceUp: t.dealer.length }));
          }, 2 * DEAL_STEP_MS);
          schedule(() => {
            reveals.reveal(ticket);
            setTable((t) => ({
              ...t,
              playerShown: t.player.length,
              phase: res.gameOver ? 'gameOver' : 'playing',
              result: res.result,
              winAmount: res.winAmount,
            }));
          }, 3 * DEAL_STEP_MS);
        },
        onError: failed('deal'),
      },
    );
  };

  const onHit = () => {
    const gameId = table.gameId;
    if (pending || table.phase !== 'playing' || !gameId) return;
    hit.mutate(
      { gameId },
      {
        onSuccess: (res) => {
          const ticket = reveals.arrive({
            newBalance: res.newBalance,
            settles: res.gameOver ? settled(gameId, table.stake, res.winAmount) : undefined,
          });
          setTable((t) => ({ ...t, player: res.playerHand, playerShown: res.playerHand.length, canDouble: false }));
          if (res.gameOver) revealDealer(res.dealerHand, res.result, res.winAmount, ticket);
        },
        onError: failed('hit'),
      },
    );
  };

  const onStand = () => {
    const gameId = table.gameId;
    if (pending || table.phase !== 'playing' || !gameId) return;
    setTable((t) => ({ ...t, phase: 'dealerTurn' }));
    stand.mutate(
      { gameId },
      {
        onSuccess: (res) => {
          const ticket = reveals.arrive({
            newBalance: res.newBalance,
            settles: settled(gameId, table.stake, res.winAmount),
          });
          setTable((t) => ({ ...t, player: res.playerHand, playerShown: res.playerHand.length }));
          revealDealer(res.dealerHand, res.result, res.winAmount, ticket);
        },
        onError: (err) => {
          // A failed stand returns to playing (SPEC.md §4).
          setTable((t) => ({ ...t, phase: 'playing' }));
          failed('stand')(err);
        },
      },
    );
  };

  const doubleAllowed = table.phase === 'playing' && table.canDouble && table.player.length === 2;

  const onDouble = () => {
    const gameId = table.gameId;
    if (pending || !doubleAllowed || !gameId) return;
    if (!canDoubleDown({ cards: table.player.length, balanceAtDeal: table.balanceAtDeal, stake: table.stake })) {
      toast.error(PLAY_MESSAGES.insufficientDouble);
      return;
    }
    double.mutate(
      { gameId },
      {
        onSuccess: (res) => {
          const stake = res.betAmount || table.stake * 2;
          const ticket = reveals.arrive({ newBalance: res.newBalance, settles: settled(gameId, stake, res.winAmount) });
          setTable((t) => ({
            ...t,
            stake,
            player: res.playerHand,
            playerShown: res.playerHand.length,
            canDouble: false,
          }));
          revealDealer(res.dealerHand, res.result, res.winAmount, ticket);
        },
        onError: failed('double'),
      },
    );
  };

  const onNewGame = () => {
    clearTimers();
    setTable(empty);
  };

  // Keyboard shortcuts H, S and D while playing (not while typing in a field).
  const keys = useRef({ onHit, onStand, onDouble });
  useEffect(() => {
    keys.current = { onHit, onStand, onDouble };
  });
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey || event.repeat || isTyping(event.target)) return;
      const action = { h: 'onHit', s: 'onStand', d: 'onDouble' }[event.key.toLowerCase()] as
        keyof typeof keys.current | undefined;
      if (!action) return;
      event.preventDefault();
      keys.current[action]();
    };
    window.addEventListener('keydown', onKey);
    return () => {
      window.removeEventListener('keydown', onKey);
    };
  }, []);

  const playerCards = table.player.slice(0, table.playerShown);
  const dealerCards = Array.from({ length: table.dealerSlots }, (_, i) =>
    i < table.dealerFaceUp ? (table.dealer[i] ?? HIDDEN) : HIDDEN,
  );
  const inHand = table.phase !== 'betting';
  const acting = table.phase === 'playing' && !pending;

  let controls;
  if (table.phase === 'betting') {
    controls = (
      <form className={styles.controls} onSubmit={onDeal} noValidate aria-label="Blackjack bet">
        <BetAmountField value={betText} onChange={setBetText} disabled={pending} />
        <Button type="submit" className={styles.play} disabled={pending} data-primary-action>
          {start.isPending ? 'Dealing...' : 'Deal'}
        </Button>
      </form>
    );
  } else if (table.phase === 'gameOver') {
    controls = (
      <div className={styles.controls}>
        <p className={styles.stake}>
          Bet <strong>{formatMoney(table.stake)}</strong>
        </p>
        <Button className={styles.play} onClick={onNewGame} data-primary-action>
          New Game
        </Button>
      </div>
    );
  } else {
    controls = (
      <div className={styles.controls}>
        <p className={styles.stake}>
          Bet <strong>{formatMoney(table.stake)}</strong>
        </p>
        <div className={styles.actions} role="group" aria-label="Actions" data-primary-action>
          <Button className={styles.action} disabled={!acting} onClick={onHit} aria-keyshortcuts="H">
            Hit <kbd className={styles.kbd}>H</kbd>
          </Button>
          <Button
            variant="secondary"
            className={styles.action}
            disabled={!acting}
            onClick={onStand}
            aria-keyshortcuts="S"
          >
            Stand <kbd className={styles.kbd}>S</kbd>
          </Button>
          <Button
            variant="secondary"
            className={styles.action}
            disabled={!acting || !doubleAllowed}
            onClick={onDouble}
            aria-keyshortcuts="D"
          >
            Double <kbd className={styles.kbd}>D</kbd>
          </Button>
        </div>
      </div>
    );
  }

  const tone = resultTone(table.result);
  return (
    <GameLayout controls={controls}>
      <div className={styles.felt} data-testid="game-board">
        {inHand ? (
          <>
            <Hand label="Dealer" cards={dealerCards} total={dealerCards.length ? handTotal(dealerCards) : null} />
            <div className={styles.bannerSlot} aria-live="polite">
              {table.phase === 'gameOver' && table.result ? (
                <div className={`${styles.banner} ${styles[tone]}`}>
                  <strong>{table.result}</strong>
                  {table.winAmount > 0 ? <span>{`You won: ${formatMoney(table.winAmount)}`}</span> : null}
                </div>
              ) : null}
            </div>
            <Hand label="Player" cards={playerCards} total={playerCards.length ? handTotal(playerCards) : null} />
          </>
        ) : (
          <p className={styles.placeholder}>Place your bet and deal to start the game</p>
        )}
      </div>
    </GameLayout>
  );
}
