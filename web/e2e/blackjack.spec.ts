// Blackjack's split, insurance and even money against the real server, in a
// 360 px wide phone screen (issue 19 point 7). One player plays every test in
// order in one page: it deals at the minimum bet until the two first cards
// pair up and splits them (the Split button), plays each hand in turn and
// checks the table, the header's balance and the banner against the server's
// JSON answers; verifies that split game in the Fairness panel (the browser
// replays it); deals until the dealer shows an ace and accepts insurance (or
// even money); and, with the hotkeys switched on, splits with P and takes
// insurance with I. Every deal that is not wanted is finished by standing
// (after declining an insurance offer). Screenshots: test/artifacts/e2e/blackjack/.
import { mkdir } from 'node:fs/promises';
import {
  api,
  artifacts,
  baseURL,
  expect,
  figure,
  guardContext,
  registerUser,
  signIn,
  test,
  type Page,
  type Player,
} from './fixtures';
import type { BrowserContext, Locator } from '@playwright/test';

/** WIDTH is the phone screen every test runs in. */
const WIDTH = 360;
/** STAKE is the minimum bet (web/src/lib/bet.ts BET_MIN). */
const STAKE = 0.1;
/** MAX_DEALS bounds each search for a wanted deal (a pair, an ace up): 1 deal in 13 brings either. */
const MAX_DEALS = 120;

interface Card {
  hidden?: boolean;
  value?: string;
  suit?: string;
  numericValue?: number;
}

interface Hands {
  activeHand?: number;
  betAmount?: number;
  canDouble?: boolean;
  canSplit?: boolean;
  doubled?: boolean[];
  evenMoney?: boolean;
  handResults?: string[];
  insurance?: string;
  secondHand?: Card[];
}

/** Answer is what every Blackjack route answers (the start's gameId and canDouble included). */
interface Answer {
  gameId?: string;
  playerHand: Card[];
  dealerHand: Card[];
  gameOver?: boolean;
  newBalance: number;
  result?: string;
  winAmount?: number;
  canDouble?: boolean;
  hands?: Hands;
}

const SUITS: Partial<Record<string, string>> = { diamonds: '♦', hearts: '♥', spades: '♠', clubs: '♣' };
const NAMES: Partial<Record<string, string>> = { A: 'Ace', K: 'King', Q: 'Queen', J: 'Jack' };

test.describe.configure({ mode: 'serial' });

let context: BrowserContext;
let page: Page;
let player: Player;
const problems: string[] = [];

/** splitGame is the split game the first test played, for the verifier. */
let splitGame: { gameId: string; first: Card[]; second: Card[]; end: Answer } | null = null;
/** hotkeysUsed records which hotkeys were exercised (opportunistically, or by the hotkeys test). */
const hotkeysUsed = { p: false, i: false };

test.beforeAll(async ({ browser }) => {
  context = await browser.newContext({ baseURL, viewport: { width: WIDTH, height: 740 } });
  await guardContext(context, problems);
  page = await context.newPage();
  // The table's animations run on timers (a deal 750 ms, the dealer's cards 600 ms then 400 ms apart):
  // a controllable clock lets shown() skip them, about 2 s of every deal.
  await page.clock.install();
  player = await registerUser(`e2ebj_${Date.now().toString(36).slice(-6)}${Math.floor(Math.random() * 1e3)}`);
});

test.afterEach(() => {
  expect(problems, 'page errors, CSP violations or console errors').toEqual([]);
});

test.afterAll(async () => {
  await context.close();
});

// ---- Helpers ------------------------------------------------------------------------

/**
 * money formats dollars as the app does (truncated to cents): 999.9 → "$999.90". The test's own sums
 * (999.3 − 0.1 = 999.1999…) are rounded to 1e-6 first, so float noise does not cost a cent.
 */
function money(value: number) {
  const text = new Intl.NumberFormat('en-US', {
    minimumFractionDigits: 2,
    maximumFractionDigits: 2,
    roundingMode: 'trunc',
  }).format(Math.round(value * 1e6) / 1e6);
  return `$${text}`;
}

/** cents rounds dollars to whole cents, so sums of amounts compare exactly. */
function cents(value: number) {
  return Math.round(value * 100) / 100;
}

/** cardName is the accessible name the table gives a card ("10 of hearts", "Ace of spades"). */
function cardName(card: Card) {
  if (card.hidden) return 'Hidden card';
  return `${NAMES[card.value ?? ''] ?? card.value ?? '?'} of ${card.suit ?? 'unknown suit'}`;
}

/** label is a card as the verifier writes it: "10♥", "A♠". */
function label(card: Card) {
  return `${card.value ?? '?'}${SUITS[card.suit ?? ''] ?? '?'}`;
}

/** total is a hand's best total (an ace counts 1 when 11 would bust). */
function total(cards: readonly Card[]) {
  let sum = 0;
  let aces = 0;
  for (const c of cards) {
    sum += c.numericValue ?? 0;
    if (c.value === 'A') aces++;
  }
  while (sum > 21 && aces > 0) {
    sum -= 10;
    aces--;
  }
  return sum;
}

async function snap(name: string) {
  await mkdir(`${artifacts}blackjack`, { recursive: true });
  await page.screenshot({ path: `${artifacts}blackjack/${name}.png`, fullPage: true });
}

/** serverBalance reads the balance the server holds (GET /api/auth/user with the player's own token). */
async function serverBalance() {
  const res = await api('GET', '/api/auth/user', undefined, player.token);
  expect(res.status, 'GET /api/auth/user for the balance check').toBe(200);
  return res.json?.user.balance ?? NaN;
}

const header = () => page.getByTestId('balance');
const button = (name: RegExp | string) => page.getByRole('button', { name });
const cardsOf = (hand: string) => page.getByRole('list', { name: `${hand} cards` }).getByRole('listitem');
/** splitHand is the box of hand n (1 or 2) after a split: its cards, its total and, at the end, its result. */
const splitHand = (n: number): Locator => page.getByRole('list', { name: `Hand ${n} cards` }).locator('xpath=../..');

/**
 * shown waits until target is visible, jumping the page's clock 300 ms at each look, so the table's
 * animation timers fire at once (time still flows as usual in between).
 */
async function shown(target: Locator, message: string) {
  await expect
    .poll(
      async () => {
        await page.clock.fastForward(300);
        return target.isVisible();
      },
      { message, intervals: [50] },
    )
    .toBe(true);
}

/** enabled is the action button whose shortcut is key, once it can be pressed ("H" is Hit). */
const enabled = (key: string) => page.locator(`button[aria-keyshortcuts="${key}"]:not([disabled])`);

/** noOverflow checks that nothing is wider than the phone screen. */
async function noOverflow(what: string) {
  await expect
    .poll(() => page.evaluate(() => document.documentElement.scrollWidth), { message: `${what} overflows ${WIDTH} px` })
    .toBeLessThanOrEqual(WIDTH);
}

/** visibleAndInside checks that a control is visible and lies within the screen's width. */
async function visibleAndInside(control: Locator, what: string) {
  await expect(control, what).toBeVisible();
  const box = await control.boundingBox();
  expect(box, `${what}: bounding box`).not.toBeNull();
  if (box) {
    expect(box.x, `${what}: left edge`).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width, `${what}: right edge`).toBeLessThanOrEqual(WIDTH);
  }
}

/**
 * act runs an action (a click or a key) and returns the server's answer to the Blackjack route it calls
 * (POST /api/games/blackjack/<route>), checking it succeeded.
 */
async function act(route: string, action: () => Promise<void>): Promise<Answer> {
  const [response] = await Promise.all([
    page.waitForResponse(
      (r) => r.request().method() === 'POST' && new URL(r.url()).pathname === `/api/games/blackjack/${route}`,
    ),
    action(),
  ]);
  const body = await response.text();
  expect(response.status(), `POST /api/games/blackjack/${route}: ${body}`).toBe(200);
  return JSON.parse(body) as Answer;
}

/**
 * settled waits for the table to show an answer that ended the game: its banner and the header's balance
 * as the answer gave it; in full (all but the deals a search passes over) also the payout, the dealer's
 * whole hand and the server's balance (GET /api/auth/user), the answer's.
 */
async function settled(end: Answer, full = true) {
  expect(end.gameOver, 'the answer ends the game').toBe(true);
  const result = end.result ?? '';
  expect(result, 'a finished game has a result').not.toBe('');
  await shown(page.getByText(result, { exact: true }), `the banner shows the server’s result ${result}`);
  if (!full) {
    await expect(header(), 'header balance after the game').toHaveText(money(end.newBalance));
    return;
  }
  const won = end.winAmount ?? 0;
  if (won > 0) await expect(page.getByText(`You won: ${money(won)}`, { exact: true })).toBeVisible();
  else await expect(page.getByText(/^You won:/)).toHaveCount(0);
  await expect(cardsOf('Dealer')).toHaveCount(end.dealerHand.length);
  await expect(cardsOf('Dealer').first()).toHaveAttribute('aria-label', cardName(end.dealerHand[0] ?? {}));
  await expect(cardsOf('Dealer').last()).toHaveAttribute('aria-label', cardName(end.dealerHand.at(-1) ?? {}));
  await expect(header(), 'header balance after the game').toHaveText(money(end.newBalance));
  expect(cents(await serverBalance()), 'the answer’s balance is the server’s').toBe(cents(end.newBalance));
  await expect(button(/^Hit/)).toHaveCount(0);
}

/** newGame clears a finished table. */
async function newGame() {
  await button('New Game').click();
  await expect(page.getByText('Place your bet and deal to start the game')).toBeVisible();
}

/**
 * deal deals at the bet in the field and waits for the deal's animation: the answer's end, the insurance
 * offer, or the actions. It checks Split is offered exactly when the server allows it.
 */
async function deal(): Promise<Answer> {
  const res = await act('start', () => button('Deal').click());
  expect(res.playerHand, 'two cards dealt').toHaveLength(2);
  if (res.gameOver) {
    await shown(page.getByText(res.result ?? '', { exact: true }), `the deal's result ${res.result ?? ''}`);
  } else if (res.hands?.insurance === 'offered') {
    await shown(page.locator('button:not([disabled])', { hasText: /^Decline$/ }), 'the insurance offer');
    await expect(button(res.hands.evenMoney ? 'Even money' : 'Accept insurance')).toBeEnabled();
  } else {
    await expectActions(res);
  }
  return res;
}

/** expectActions waits for the actions of a game in play and checks Split and Double against the answer. */
async function expectActions(res: Answer) {
  await shown(enabled('H'), 'the actions');
  const a = res.playerHand.at(0) ?? {};
  const b = res.playerHand.at(1) ?? {};
  const pair = res.playerHand.length === 2 && a.value === b.value && !res.hands?.secondHand?.length;
  expect(res.hands?.canSplit ?? false, `canSplit for ${cardName(a)} and ${cardName(b)}`).toBe(pair);
  if (pair) await expect(button(/^Split/)).toBeEnabled();
  else await expect(button(/^Split/)).toBeDisabled();
}

/** decline answers an insurance offer no and returns the answer (the dealer peeked). */
async function decline(): Promise<Answer> {
  const res = await act('insurance', () => button('Decline').click());
  expect(res.hands?.insurance).toBe('declined');
  if (!res.gameOver) await expectActions(res);
  return res;
}

/** finish ends a game in play by standing (every hand left), then clears the table. */
async function finish(res: Answer) {
  let cur = res;
  while (!cur.gameOver) cur = await act('stand', () => button(/^Stand/).click());
  await settled(cur, false);
  await newGame();
}

/**
 * accept takes the insurance (or even money) offer with take (the button or the I key) and checks the
 * half stake left the balance when the server answered (even money takes none), the outcome the table
 * shows agrees with the answer, and the header's balance; it finishes the game.
 */
async function accept(dealt: Answer, how: string, take: () => Promise<void>) {
  const evenMoney = dealt.hands?.evenMoney ?? false;
  const before = dealt.newBalance;
  await expect(header()).toHaveText(money(before));
  await expect(page.getByText(/^Dealer shows an ace\./)).toBeVisible();
  await snap(evenMoney ? 'even-money-offer' : 'insurance-offer');
  const res = await act('insurance', take);
  const dealerBlackjack = total(res.dealerHand) === 21 && res.dealerHand.length === 2 && !res.dealerHand[1]?.hidden;
  if (evenMoney) {
    // Even money: 1:1 at once, no insurance stake, whatever the dealer holds.
    expect(res.hands?.insurance).toBe('even_money');
    expect(res.gameOver).toBe(true);
    expect(res.result).toBe('Even money! You win');
    expect(cents(res.winAmount ?? 0)).toBe(cents(2 * STAKE));
    expect(cents(res.newBalance)).toBe(cents(before + 2 * STAKE));
    await settled(res);
    figure('insurance', `${how}: even money (player Blackjack), paid ${money(res.winAmount ?? 0)}`);
    await newGame();
    return;
  }
  expect(res.hands?.insurance).toBe('taken');
  expect(cents(res.hands?.betAmount ?? 0), 'the total stake holds the insurance').toBe(cents(1.5 * STAKE));
  await expect(page.getByText(`Bet ${money(1.5 * STAKE)}`, { exact: true })).toBeVisible();
  if (res.gameOver) {
    // The dealer peeked and has Blackjack: insurance pays 2:1 on its half stake, the hand loses.
    expect(
      dealerBlackjack,
      `the peek ended the game, so the dealer holds Blackjack: ${JSON.stringify(res.dealerHand)}`,
    ).toBe(true);
    expect(res.result).toBe('Dealer has Blackjack! Dealer wins. Insurance pays 2:1');
    expect(cents(res.winAmount ?? 0)).toBe(cents(1.5 * STAKE));
    expect(cents(res.newBalance)).toBe(cents(before - STAKE / 2 + 1.5 * STAKE));
    await settled(res);
    figure('insurance', `${how}: taken, dealer Blackjack, insurance paid ${money(res.winAmount ?? 0)}`);
    await newGame();
    return;
  }
  // No dealer Blackjack: the half stake is lost at once, the hole card stays hidden and the hand plays on.
  expect(cents(res.newBalance), 'the insurance takes half the stake').toBe(cents(before - STAKE / 2));
  await expect(header(), 'header balance after the insurance stake').toHaveText(money(before - STAKE / 2));
  await expect(page.getByText(/^Dealer shows an ace\./)).toHaveCount(0);
  await expect(cardsOf('Dealer').last()).toHaveAttribute('aria-label', 'Hidden card');
  await expectActions(res);
  const end = await act('stand', () => button(/^Stand/).click());
  expect(end.result ?? '', 'no insurance payout without a dealer Blackjack').not.toContain('Insurance pays');
  await settled(end);
  figure('insurance', `${how}: taken, no dealer Blackjack, lost ${money(STAKE / 2)}, then ${end.result ?? ''}`);
  await newGame();
}

/**
 * playSplit splits the pair dealt (split, the button or the P key), then plays each hand in turn:
 * double a 9 to 11 on two cards (once), hit up to 12, else stand; it checks every answer against the
 * table and the balance against the answers; with resume, it reloads the page after the split first. It
 * returns the split hands at the end and the game's last answer.
 */
async function playSplit(dealt: Answer, split: () => Promise<void>, resume = false) {
  const before = dealt.newBalance;
  const a = dealt.playerHand.at(0) ?? {};
  await expect(header()).toHaveText(money(before));
  await visibleAndInside(button(/^Split/), 'the Split button');

  // Hold the split request until the table is checked: the balance moves when the server answers, not before.
  let release: (value: unknown) => void = () => undefined;
  const held = new Promise((resolve) => {
    release = resolve;
  });
  const route = '**/api/games/blackjack/split';
  await page.route(route, async (r) => {
    await held;
    await r.continue();
  });
  const answer = act('split', async () => {
    await split();
    await expect(button(/^Split/), 'Split waits for the server').toBeDisabled();
    await expect(header(), 'no balance change before the server answers').toHaveText(money(before));
    release(undefined);
  });
  let cur = await answer;
  await page.unroute(route);

  const first = cur.playerHand;
  const second = cur.hands?.secondHand ?? [];
  expect(second.length, 'the split answer has a second hand').toBeGreaterThan(0);
  expect(cents(cur.hands?.betAmount ?? 0), 'the split doubles the stake').toBe(cents(2 * STAKE));
  expect(cents(cur.newBalance - (cur.gameOver ? (cur.winAmount ?? 0) : 0)), 'the split takes one stake').toBe(
    cents(before - STAKE),
  );
  await expect(splitHand(1)).toBeVisible();
  await expect(splitHand(2)).toBeVisible();
  await expect(cardsOf('Player')).toHaveCount(0);
  let doubled = false;
  let hits = 0;
  const played = [0, 0];

  if (a.value === 'A') {
    // Split aces: one card each, and the dealer plays at once.
    expect(first, 'split aces: one card on hand 1').toHaveLength(2);
    expect(second, 'split aces: one card on hand 2').toHaveLength(2);
    expect(cur.gameOver, 'split aces end the game').toBe(true);
  } else if (!cur.gameOver) {
    await expect(header(), 'header balance right after the split').toHaveText(money(before - STAKE));
    await expect(page.getByText(`Bet ${money(2 * STAKE)}`, { exact: true })).toBeVisible();
  }
  await noOverflow('the split table');
  await snap('split');
  if (resume && !cur.gameOver) {
    // A reload resumes the game as it stands: both hands, the hand in play, the total stake, the balance.
    await page.reload();
    await shown(enabled('H'), 'the resumed split game');
    await expect(cardsOf('Hand 1')).toHaveCount(first.length);
    await expect(cardsOf('Hand 2')).toHaveCount(second.length);
    await expect(splitHand((cur.hands?.activeHand ?? 0) + 1)).toHaveAttribute('aria-current', 'true');
    await expect(page.getByText(`Bet ${money(2 * STAKE)}`, { exact: true })).toBeVisible();
    await expect(header(), 'header balance after the reload').toHaveText(money(before - STAKE));
    await expect(button(/^Split/)).toBeDisabled();
  }

  while (!cur.gameOver) {
    const h = cur.hands ?? {};
    const active = h.activeHand ?? 0;
    const hand = active === 1 ? (h.secondHand ?? []) : cur.playerHand;
    await expect(splitHand(active + 1), `hand ${active + 1} is the hand in play`).toHaveAttribute(
      'aria-current',
      'true',
    );
    await expect(splitHand(2 - active)).not.toHaveAttribute('aria-current', 'true');
    await expect(button(/^Hit/)).toBeEnabled();
    await expect(button(/^Split/), 'one split per game').toBeDisabled();
    const t = total(hand);
    const previous = cur;
    played[active]++;
    if (!doubled && h.canDouble && hand.length === 2 && t >= 9 && t <= 11) {
      await expect(button(/^Double/)).toBeEnabled();
      const balance = cur.newBalance;
      cur = await act('double', () => button(/^Double/).click());
      doubled = true;
      const cards = active === 1 ? (cur.hands?.secondHand ?? []) : cur.playerHand;
      expect(cards, 'a double deals one card').toHaveLength(3);
      expect(cur.hands?.doubled?.[active], `hand ${active + 1} doubled`).toBe(true);
      expect(cents(cur.hands?.betAmount ?? 0)).toBe(cents(3 * STAKE));
      if (!cur.gameOver) {
        expect(cents(cur.newBalance)).toBe(cents(balance - STAKE));
        await expect(header(), 'header balance after the double').toHaveText(money(balance - STAKE));
      }
      figure('double after split', `hand ${active + 1}: ${t} doubled, drew ${cardName(cards[2] ?? {})}`);
    } else if (t <= 12) {
      cur = await act('hit', () => button(/^Hit/).click());
      hits++;
      const cards = active === 1 ? (cur.hands?.secondHand ?? []) : cur.playerHand;
      expect(cards, `the hit went to hand ${active + 1}`).toHaveLength(hand.length + 1);
    } else {
      cur = await act('stand', () => button(/^Stand/).click());
    }
    // The other hand did not change.
    if (active === 0) expect(cur.hands?.secondHand).toEqual(previous.hands?.secondHand);
    else expect(cur.playerHand).toEqual(previous.playerHand);
    if (!cur.gameOver) {
      await expect(cardsOf('Hand 1')).toHaveCount(cur.playerHand.length);
      await expect(cardsOf('Hand 2')).toHaveCount(cur.hands?.secondHand?.length ?? 0);
    }
  }

  // The end: both hands as the server dealt them, each hand's result and the payout.
  const end = cur;
  const firstEnd = end.playerHand;
  const secondEnd = end.hands?.secondHand ?? [];
  await settled(end);
  for (const [n, cards] of [
    [1, firstEnd],
    [2, secondEnd],
  ] as const) {
    await expect(cardsOf(`Hand ${n}`)).toHaveCount(cards.length);
    for (let i = 0; i < cards.length; i++) {
      await expect(cardsOf(`Hand ${n}`).nth(i)).toHaveAttribute('aria-label', cardName(cards[i] ?? {}));
    }
    const result = end.hands?.handResults?.[n - 1] ?? '';
    expect(result, `hand ${n} has a result`).not.toBe('');
    await expect(splitHand(n).locator('xpath=./p'), `hand ${n}'s result`).toHaveText(result);
  }
  expect(end.result).toBe(`Hand 1: ${end.hands?.handResults?.[0] ?? ''}. Hand 2: ${end.hands?.handResults?.[1] ?? ''}`);
  const stake = 2 * STAKE + (doubled ? STAKE : 0);
  await expect(page.getByText(`Bet ${money(stake)}`, { exact: true })).toBeVisible();
  expect(cents(end.newBalance), 'balance = before − stakes + payout').toBe(
    cents(before - stake + STAKE + (end.winAmount ?? 0)),
  );
  await noOverflow('the settled split table');
  await snap('split-settled');
  figure(
    'split',
    `${a.value ?? '?'}s split: hand 1 ${firstEnd.map(label).join(' ')} (${played[0]} actions), hand 2 ${secondEnd
      .map(label)
      .join(' ')} (${played[1]} actions), ${hits} hits${doubled ? ', a double' : ''}; ${end.result ?? ''}; paid ${money(
      end.winAmount ?? 0,
    )}`,
  );
  return { gameId: dealt.gameId ?? '', first: firstEnd, second: secondEnd, end };
}

/** setHotkeys switches the game hotkeys on or off in the "?" panel. */
async function setHotkeys(on: boolean) {
  await button(/^Hotkeys (on|off)$/).click();
  const dialog = page.getByRole('dialog', { name: 'Hotkeys' });
  await expect(dialog.getByText('Split', { exact: true })).toBeVisible();
  await expect(dialog.getByText('Take insurance (or even money)', { exact: true })).toBeVisible();
  const toggle = dialog.getByRole('switch', { name: 'Enable hotkeys' });
  if ((await toggle.isChecked()) !== on) await toggle.click();
  await expect(toggle).toBeChecked({ checked: on });
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(button(`Hotkeys ${on ? 'on' : 'off'}`)).toBeVisible();
}

/**
 * searchDeals deals until want(answer) takes the deal (and plays it to the end), or until() holds before a
 * deal, finishing every other deal by standing (after declining an insurance offer); it returns the number
 * of deals and fails after MAX_DEALS. With hotkeys, the first pair is split with P and the first insurance
 * offer taken with I.
 */
async function searchDeals(
  what: string,
  want: (res: Answer) => Promise<boolean>,
  { hotkeys = false, until = () => false }: { hotkeys?: boolean; until?: () => boolean } = {},
) {
  for (let n = 1; n <= MAX_DEALS; n++) {
    if (until()) return n - 1;
    let res = await deal();
    if (await want(res)) return n;
    if (res.gameOver) {
      await settled(res, false);
      await newGame();
      continue;
    }
    if (res.hands?.insurance === 'offered') {
      if (hotkeys && !hotkeysUsed.i) {
        await accept(res, 'the I key', () => page.keyboard.press('i'));
        hotkeysUsed.i = true;
        continue;
      }
      res = await decline();
      if (res.gameOver) {
        await settled(res, false);
        await newGame();
        continue;
      }
      if (await want(res)) return n;
    }
    if (hotkeys && !hotkeysUsed.p && res.hands?.canSplit) {
      await playSplit(res, () => page.keyboard.press('p'));
      hotkeysUsed.p = true;
      await newGame();
      continue;
    }
    await finish(res);
  }
  throw new Error(`${what}: not dealt in ${MAX_DEALS} deals (about 1 deal in 13 brings it)`);
}

// ---- Tests ----------------------------------------------------------------------------

test('split a pair at 360 px: two hands played in turn, balance, results and payout as the server answered', async () => {
  test.setTimeout(300_000);
  await page.goto('/');
  await signIn(page, player.username, player.password);
  await page.goto('/games/blackjack');
  await expect(page.getByRole('heading', { level: 1, name: 'Blackjack' })).toBeVisible();
  await page.getByLabel('Bet Amount').fill(String(STAKE));
  await noOverflow('the Blackjack page');
  // The hotkeys go on now: the searches below take their first insurance offer with I and split their
  // first pair with P when they do not want it themselves.
  await setHotkeys(true);
  const started = Date.now();
  const deals = await searchDeals(
    'a pair to split',
    async (res) => {
      if (res.gameOver || res.hands?.insurance === 'offered' || !res.hands?.canSplit) return false;
      splitGame = await playSplit(res, () => button(/^Split/).click(), true);
      return true;
    },
    { hotkeys: true },
  );
  figure('split search', `a pair in ${deals} deals, ${((Date.now() - started) / 1000).toFixed(1)} s with the split`);
  await newGame();
  // The field keeps the original stake, also after the reload resumed the split game (its total stake is twice it).
  await expect(page.getByLabel('Bet Amount')).toHaveValue(String(STAKE));
});

test('the browser verifier replays the split game to the same payout', async () => {
  expect(splitGame, 'the split test played a split game').not.toBeNull();
  if (!splitGame) return;
  const { first, second, end } = splitGame;
  await button('Fairness').click();
  const dialog = page.getByRole('dialog', { name: 'Fairness' });
  await dialog.getByRole('button', { name: 'Rotate Seed Pair' }).click();
  await expect(dialog.getByText('Previous seed pair revealed')).toBeVisible();
  await dialog.getByRole('tab', { name: 'My Bets' }).click();
  // The newest bet is the split game.
  await dialog.getByRole('list', { name: 'My Bets' }).getByRole('button').first().click();
  await expect(dialog.getByText('Blackjack bet', { exact: true })).toBeVisible();
  const fact = (name: string) =>
    dialog.locator('dl > div', { has: page.locator('dt').getByText(name, { exact: true }) }).locator('dd');
  await expect(dialog.getByText('✓ Verified in your browser: the result matches the record')).toBeVisible();
  await expect(dialog.getByText('The server recomputes the same result')).toBeVisible();
  await expect(fact('Payout'), 'the recorded payout is the game’s').toHaveText(money(end.winAmount ?? 0));
  await expect(fact('Bet')).toHaveText(money(end.hands?.betAmount ?? 0));
  await expect(fact('actions')).toContainText('p');
  // The browser's replay deals the same two hands and the same result.
  await expect(fact('Player')).toHaveText(new RegExp(`^${first.map(label).join(' ')} \\(`));
  await expect(fact('Second hand')).toHaveText(new RegExp(`^${second.map(label).join(' ')} \\(`));
  await expect(fact('Result')).toHaveText(end.result ?? '');
  await noOverflow('the verified split bet');
  await snap('split-verified');
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
});

test('accept insurance (or even money) when the dealer shows an ace, at 360 px', async () => {
  test.setTimeout(300_000);
  await page.goto('/games/blackjack');
  await page.getByLabel('Bet Amount').fill(String(STAKE));
  const started = Date.now();
  const deals = await searchDeals(
    'an ace up',
    async (res) => {
      if (res.gameOver || res.hands?.insurance !== 'offered') return false;
      const take = button(res.hands.evenMoney ? 'Even money' : 'Accept insurance');
      await visibleAndInside(take, 'the accept button');
      await visibleAndInside(button('Decline'), 'the Decline button');
      await noOverflow('the insurance offer');
      await accept(res, 'the button', () => take.click());
      return true;
    },
    { hotkeys: true },
  );
  figure('insurance search', `an ace up in ${deals} deals, ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

test('hotkeys: P splits and I takes insurance', async () => {
  test.setTimeout(300_000);
  await page.goto('/games/blackjack');
  await page.getByLabel('Bet Amount').fill(String(STAKE));
  await setHotkeys(true);
  const started = Date.now();
  // What the searches before left: a pair split with P, an ace up taken with I (often none).
  const deals = await searchDeals('a pair and an ace up for the hotkeys', () => Promise.resolve(false), {
    hotkeys: true,
    until: () => hotkeysUsed.p && hotkeysUsed.i,
  });
  figure('hotkeys search', `P and I in ${deals} deals, ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await setHotkeys(false);
});
