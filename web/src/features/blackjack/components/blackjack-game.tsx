import { useEffect, useReducer, useRef, type SubmitEvent } from 'react';
import { GameLayout } from '@/components/layouts/game-frame';
import { BetAmountField } from '@/components/ui/bet-amount-field';
import { Button } from '@/components/ui/button';
import { useResumeGame, type ActiveBlackjackGame } from '@/lib/active-games';
import { useBetInput } from '@/hooks/use-bet-input';
import { useBetHotkeys, type Hotkey } from '@/hooks/use-hotkeys';
import { Hotkeys } from '@/components/ui/hotkeys-panel';
import { betRefusal, formatBetInput, GENERIC_ERROR, PLAY_MESSAGES } from '@/lib/bet';
import { useBetReveals, type RevealFigures } from '@/lib/bet-reveals';
import { formatMoney } from '@/lib/format';
import { toast } from '@/lib/toast';
import type { BlackjackHandsSchema } from '@/gen/fairplay/v1/game_pb';
import type { ApiJson } from '@/lib/api-types';
import { useDoubleBlackjack } from '../api/double-blackjack';
import { useHitBlackjack } from '../api/hit-blackjack';
import { useInsureBlackjack } from '../api/insure-blackjack';
import { useSplitBlackjack } from '../api/split-blackjack';
import { useStandBlackjack } from '../api/stand-blackjack';
import { useStartBlackjack, type StartBlackjackResult } from '../api/start-blackjack';
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

/** Hands is the split and insurance state every Blackjack answer carries. */
export type Hands = ApiJson<typeof BlackjackHandsSchema>;

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
  /** balanceAtDeal is the balance after the last stake taken, which must cover a double's, split's or insurance's stake. */
  balanceAtDeal: number;
  canDouble: boolean;
  /** base is the original stake; stake is the total (doubles, split, insurance). */
  base: number;
  /** second is the second hand after a split (player is then the first); activeHand the hand in play. */
  second: Card[];
  activeHand: number;
  canSplit: boolean;
  /** insurance is '' (not offered), 'offered' (decide first), 'taken', 'declined' or 'even_money'. */
  insurance: string;
  evenMoney: boolean;
  handResults: string[];
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
  base: 0,
  second: [],
  activeHand: 0,
  canSplit: false,
  insurance: '',
  evenMoney: false,
  handResults: [],
};

/** totalStake is the total stake an answer reports, or fallback when it has none. */
function totalStake(h: Hands | undefined, fallback: number): number {
  return h && h.betAmount > 0 ? h.betAmount : fallback;
}

/** isSplit tells whether an answer shows two hands. */
function isSplit(h: Hands | undefined): boolean {
  return (h?.secondHand.length ?? 0) > 0;
}

/** fromHands is the table's part an answer's hands give (absent: no split, no insurance). */
function fromHands(h: Hands | undefined, canDouble = false) {
  return {
    second: h?.secondHand ?? [],
    activeHand: h?.activeHand ?? 0,
    canSplit: h?.canSplit ?? false,
    canDouble: h ? h.canDouble : canDouble,
    insurance: h?.insurance ?? '',
    evenMoney: h?.evenMoney ?? false,
    handResults: h?.handResults ?? [],
  };
}

type Action =
  | { type: 'resumed'; game: ActiveBlackjackGame; balance: number }
  | { type: 'dealt'; res: StartBlackjackResult; stake: number }
  | { type: 'playerFirstCardShown' }
  | { type: 'dealerHandShown' }
  | { type: 'dealFinished'; res: StartBlackjackResult }
  | { type: 'playerCards'; cards: Card[] }
  | { type: 'update'; player: Card[]; hands?: Hands; balance: number }
  | { type: 'doubled'; cards: Card[]; stake: number }
  | { type: 'standing' }
  | { type: 'standFailed' }
  | { type: 'dealerTurn'; dealer: Card[] }
  | { type: 'dealerCardShown'; index: number }
  | { type: 'over'; dealer: Card[]; result: string; winAmount: number }
  | { type: 'newGame' };

/** reducer is the table's every move; the timers of the animations only dispatch. */
function reducer(t: Table, action: Action): Table {
  switch (action.type) {
    case 'resumed': {
      const { game } = action;
      return {
        ...empty,
        phase: 'playing',
        gameId: game.gameId,
        player: game.playerHand,
        dealer: game.dealerHand,
        playerShown: game.playerHand.length,
        dealerSlots: game.dealerHand.length,
        dealerFaceUp: game.dealerHand.length,
        balanceAtDeal: action.balance,
        ...fromHands(game.hands, game.canDouble),
        stake: totalStake(game.hands, game.betAmount),
        base: game.betAmount / stakesOf(game.hands),
      };
    }
    case 'dealt': {
      // The dealer's first card shows at once; the rest follow (dealerHandShown, dealFinished).
      const { res } = action;
      return {
        ...empty,
        phase: 'dealing',
        gameId: res.gameId,
        stake: action.stake,
        player: res.playerHand,
        dealer: res.dealerHand,
        dealerSlots: 1,
        dealerFaceUp: 1,
        balanceAtDeal: res.newBalance - (res.gameOver ? res.winAmount : 0),
        ...fromHands(res.hands, res.canDouble),
        base: action.stake,
      };
    }
    case 'playerFirstCardShown':
      return { ...t, playerShown: 1 };
    case 'dealerHandShown':
      return { ...t, dealerSlots: t.dealer.length, dealerFaceUp: t.dealer.length };
    case 'dealFinished':
      return {
        ...t,
        playerShown: t.player.length,
        phase: action.res.gameOver ? 'gameOver' : 'playing',
        result: action.res.result,
        winAmount: action.res.winAmount,
      };
    case 'playerCards':
      return { ...t, player: action.cards, playerShown: action.cards.length, canDouble: false };
    case 'update': {
      // An answer that may leave the game running: after a split, an insurance decision, or a
      // stand or double on the first of two hands. A stand that did not end the game plays on.
      const h = action.hands;
      return {
        ...t,
        ...fromHands(h, false),
        phase: t.phase === 'dealerTurn' ? 'playing' : t.phase,
        player: action.player,
        playerShown: action.player.length,
        stake: totalStake(h, t.stake),
        balanceAtDeal: action.balance,
      };
    }
    case 'doubled':
      return { ...t, stake: action.stake, player: action.cards, playerShown: action.cards.length, canDouble: false };
    case 'standing':
      return { ...t, phase: 'dealerTurn' };
    case 'standFailed':
      // A failed stand returns to playing (SPEC.md §4).
      return { ...t, phase: 'playing' };
    case 'dealerTurn':
      return {
        ...t,
        phase: 'dealerTurn',
        dealer: action.dealer,
        dealerSlots: Math.max(2, t.dealerSlots),
        dealerFaceUp: 1,
      };
    case 'dealerCardShown':
      return { ...t, dealerFaceUp: action.index + 1, dealerSlots: Math.max(t.dealerSlots, action.index + 1) };
    case 'over':
      return {
        ...t,
        phase: 'gameOver',
        dealerSlots: action.dealer.length,
        dealerFaceUp: action.dealer.length,
        result: action.result,
        winAmount: action.winAmount,
      };
    case 'newGame':
      return empty;
  }
}

const HIDDEN: Card = { hidden: true };

/** stakesOf counts the base stakes a running game holds: 1, plus 1 per double, 1 for a split, 0.5 for insurance. */
function stakesOf(h: Hands | undefined): number {
  if (!h) return 1;
  let n = 1 + (h.secondHand.length > 0 ? 1 : 0) + (h.insurance === 'taken' ? 0.5 : 0);
  for (const d of h.doubled) if (d) n++;
  return n;
}

/**
 * BlackjackGame: deal, then hit, stand, double or split against the dealer, answering the insurance
 * (or even money) offer first when the dealer shows an ace (SPEC.md §2, §4 Blackjack).
 */
export function BlackjackGame() {
  const { user, betText, setBetText, takeBet } = useBetInput();
  const [table, dispatch] = useReducer(reducer, empty);
  const timers = useRef<number[]>([]);
  const start = useStartBlackjack();
  const hit = useHitBlackjack();
  const stand = useStandBlackjack();
  const double = useDoubleBlackjack();
  const split = useSplitBlackjack();
  const insure = useInsureBlackjack();
  const reveals = useBetReveals('blackjack');
  const pending =
    start.isPending || hit.isPending || stand.isPending || double.isPending || split.isPending || insure.isPending;

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
    // betAmount is the total stake (a split's, a double's, insurance's): the field takes the original one.
    setBetText(formatBetInput(game.betAmount / stakesOf(game.hands)));
    dispatch({ type: 'resumed', game, balance: user?.balance ?? 0 });
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
    dispatch({ type: 'dealerTurn', dealer });
    for (let k = 1; k < dealer.length; k++) {
      schedule(
        () => {
          dispatch({ type: 'dealerCardShown', index: k });
        },
        DEALER_REVEAL_DELAY_MS + (k - 1) * DEALER_CARD_MS,
      );
    }
    schedule(
      () => {
        reveals.reveal(ticket);
        dispatch({ type: 'over', dealer, result, winAmount });
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
    deal();
  };

  const deal = () => {
    if (pending || table.phase !== 'betting') return;
    const bet = takeBet();
    if (bet === null) return;
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
          dispatch({ type: 'dealt', res, stake: bet });
          schedule(() => {
            dispatch({ type: 'playerFirstCardShown' });
          }, DEAL_STEP_MS);
          schedule(() => {
            dispatch({ type: 'dealerHandShown' });
          }, 2 * DEAL_STEP_MS);
          schedule(() => {
            reveals.reveal(ticket);
            dispatch({ type: 'dealFinished', res });
          }, 3 * DEAL_STEP_MS);
        },
        onError: failed('deal'),
      },
    );
  };

  const onHit = () => {
    const gameId = table.gameId;
    if (pending || table.phase !== 'playing' || !gameId || table.insurance === 'offered') return;
    hit.mutate(
      { gameId },
      {
        onSuccess: (res) => {
          const stake = totalStake(res.hands, table.stake);
          const ticket = reveals.arrive({
            newBalance: res.newBalance,
            settles: res.gameOver ? settled(gameId, stake, res.winAmount) : undefined,
          });
          dispatch({ type: 'update', player: res.playerHand, hands: res.hands, balance: res.newBalance });
          if (res.gameOver) revealDealer(res.dealerHand, res.result, res.winAmount, ticket);
        },
        onError: failed('hit'),
      },
    );
  };

  const onStand = () => {
    const gameId = table.gameId;
    if (pending || table.phase !== 'playing' || !gameId || table.insurance === 'offered') return;
    // Standing on the first of two split hands moves to the second; otherwise the dealer plays.
    const firstOfTwo = table.second.length > 0 && table.activeHand === 0;
    if (!firstOfTwo) dispatch({ type: 'standing' });
    stand.mutate(
      { gameId },
      {
        onSuccess: (res) => {
          const stake = totalStake(res.hands, table.stake);
          const ticket = reveals.arrive({
            newBalance: res.newBalance,
            settles: res.gameOver ? settled(gameId, stake, res.winAmount) : undefined,
          });
          dispatch({ type: 'update', player: res.playerHand, hands: res.hands, balance: res.newBalance });
          if (res.gameOver) revealDealer(res.dealerHand, res.result, res.winAmount, ticket);
        },
        onError: (err) => {
          dispatch({ type: 'standFailed' });
          failed('stand')(err);
        },
      },
    );
  };

  const activeCards = table.activeHand === 1 ? table.second : table.player;
  const deciding = table.insurance === 'offered';
  const doubleAllowed = table.phase === 'playing' && !deciding && table.canDouble && activeCards.length === 2;
  const splitAllowed = table.phase === 'playing' && !deciding && table.canSplit;

  const onDouble = () => {
    const gameId = table.gameId;
    if (pending || !doubleAllowed || !gameId) return;
    if (!canDoubleDown({ cards: activeCards.length, balanceAtDeal: table.balanceAtDeal, stake: table.base })) {
      toast.error(PLAY_MESSAGES.insufficientDouble);
      return;
    }
    double.mutate(
      { gameId },
      {
        onSuccess: (res) => {
          const stake = res.betAmount || table.stake + table.base;
          const ticket = reveals.arrive({
            newBalance: res.newBalance,
            settles: res.gameOver ? settled(gameId, stake, res.winAmount) : undefined,
          });
          if (isSplit(res.hands)) {
            // A double after a split: one hand ends, the game may go on.
            dispatch({ type: 'update', player: res.playerHand, hands: res.hands, balance: res.newBalance });
          } else {
            dispatch({ type: 'doubled', cards: res.playerHand, stake });
          }
          if (res.gameOver) revealDealer(res.dealerHand, res.result, res.winAmount, ticket);
        },
        onError: failed('double'),
      },
    );
  };

  const onSplit = () => {
    const gameId = table.gameId;
    if (pending || !splitAllowed || !gameId) return;
    if (table.balanceAtDeal < table.base) {
      toast.error(PLAY_MESSAGES.insufficientSplit);
      return;
    }
    split.mutate(
      { gameId },
      {
        onSuccess: (res) => {
          const stake = totalStake(res.hands, table.stake + table.base);
          const ticket = reveals.arrive({
            newBalance: res.newBalance,
            settles: res.gameOver ? settled(gameId, stake, res.winAmount) : undefined,
          });
          dispatch({ type: 'update', player: res.playerHand, hands: res.hands, balance: res.newBalance });
          // Split aces take one card each and stand: the dealer plays at once.
          if (res.gameOver) revealDealer(res.dealerHand, res.result, res.winAmount, ticket);
        },
        onError: failed('split'),
      },
    );
  };

  const onInsure = (accept: boolean) => {
    const gameId = table.gameId;
    if (pending || table.phase !== 'playing' || !deciding || !gameId) return;
    if (accept && !table.evenMoney && table.balanceAtDeal < table.base / 2) {
      toast.error(PLAY_MESSAGES.insufficientInsurance);
      return;
    }
    insure.mutate(
      { gameId, accept },
      {
        onSuccess: (res) => {
          const stake = totalStake(res.hands, table.stake);
          const ticket = reveals.arrive({
            newBalance: res.newBalance,
            settles: res.gameOver ? settled(gameId, stake, res.winAmount) : undefined,
          });
          dispatch({ type: 'update', player: res.playerHand, hands: res.hands, balance: res.newBalance });
          // The dealer peeks: a natural (or even money) ends the game and shows the hole card.
          if (res.gameOver) revealDealer(res.dealerHand, res.result, res.winAmount, ticket);
        },
        onError: failed('insurance'),
      },
    );
  };

  const onNewGame = () => {
    clearTimers();
    dispatch({ type: 'newGame' });
  };

  // The game hotkeys (issue 19; off by default, switched on in the Hotkeys panel): Space deals, Q/W halve/double
  // the bet, H/S/D/P hit, stand, double and split, I/N take or decline insurance (even money) when offered.
  const playing = table.phase === 'playing' && !pending;
  const hotkeys: Hotkey[] = [
    ...useBetHotkeys({
      bet: deal,
      betLabel: 'Deal',
      betText,
      setBetText,
      betDisabled: pending || table.phase !== 'betting',
      amountDisabled: pending || table.phase !== 'betting',
    }),
    { key: 'h', label: 'H', description: 'Hit', run: onHit, disabled: !playing || deciding },
    { key: 's', label: 'S', description: 'Stand', run: onStand, disabled: !playing || deciding },
    { key: 'd', label: 'D', description: 'Double down', run: onDouble, disabled: !playing || deciding },
    { key: 'p', label: 'P', description: 'Split', run: onSplit, disabled: !playing || deciding },
    {
      key: 'i',
      label: 'I',
      description: 'Take insurance (or even money)',
      run: () => {
        onInsure(true);
      },
      disabled: !playing || !deciding,
    },
    {
      key: 'n',
      label: 'N',
      description: 'Decline insurance',
      run: () => {
        onInsure(false);
      },
      disabled: !playing || !deciding,
    },
  ];

  const playerCards = table.player.slice(0, table.playerShown);
  const splitHands = table.second.length > 0;
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
  } else if (deciding) {
    controls = (
      <div className={styles.controls}>
        <p className={styles.stake}>
          Bet <strong>{formatMoney(table.stake)}</strong>
        </p>
        <p className={styles.offer} role="status">
          {table.evenMoney
            ? 'Dealer shows an ace. Even money pays 1:1 now; decline and a dealer Blackjack pushes.'
            : `Dealer shows an ace. Insurance costs ${formatMoney(table.base / 2)} and pays 2:1 if the dealer has Blackjack.`}
        </p>
        <div className={styles.offerActions} role="group" aria-label="Insurance" data-primary-action>
          <Button
            className={styles.action}
            disabled={!acting}
            onClick={() => {
              onInsure(true);
            }}
          >
            {table.evenMoney ? 'Even money' : 'Accept insurance'}
          </Button>
          <Button
            variant="secondary"
            className={styles.action}
            disabled={!acting}
            onClick={() => {
              onInsure(false);
            }}
          >
            Decline
          </Button>
        </div>
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
          <Button
            variant="secondary"
            className={styles.action}
            disabled={!acting || !splitAllowed}
            onClick={onSplit}
            aria-keyshortcuts="P"
          >
            Split <kbd className={styles.kbd}>P</kbd>
          </Button>
        </div>
      </div>
    );
  }

  const tone = resultTone(table.result);
  return (
    <GameLayout
      controls={
        <>
          {controls}
          <Hotkeys keys={hotkeys} />
        </>
      }
    >
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
            {splitHands ? (
              <div className={styles.splitHands}>
                {[playerCards, table.second].map((cards, i) => (
                  <div
                    key={i}
                    className={`${styles.splitHand} ${table.phase === 'playing' && table.activeHand === i ? styles.activeHand : ''}`}
                    aria-current={table.phase === 'playing' && table.activeHand === i ? 'true' : undefined}
                  >
                    <Hand label={`Hand ${i + 1}`} cards={cards} total={cards.length ? handTotal(cards) : null} />
                    {table.phase === 'gameOver' && table.handResults[i] ? (
                      <p className={styles.handResult}>{table.handResults[i]}</p>
                    ) : null}
                  </div>
                ))}
              </div>
            ) : (
              <Hand label="Player" cards={playerCards} total={playerCards.length ? handTotal(playerCards) : null} />
            )}
          </>
        ) : (
          <p className={styles.placeholder}>Place your bet and deal to start the game</p>
        )}
      </div>
      <details className={styles.rules}>
        <summary>Rules</summary>
        <ul>
          <li>Unlimited deck; dealer stands on all 17s; Blackjack pays 3:2, other wins 1:1, equal totals push.</li>
          <li>Double on the first two cards of a hand, also after a split.</li>
          <li>
            Split two cards of the same rank (10-10 or K-K, not 10-K) once, for a second equal bet. Split aces get one
            card each. A 21 on a split hand pays 1:1.
          </li>
          <li>
            Dealer shows an ace: insurance (half your bet, pays 2:1 on a dealer Blackjack) or, with Blackjack, even
            money (1:1 at once) is offered first; then the dealer checks for Blackjack.
          </li>
          <li>RTP with best play: 99.43% (house edge 0.57%).</li>
        </ul>
      </details>
    </GameLayout>
  );
}
