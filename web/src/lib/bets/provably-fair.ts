import { kenoPayouts, type KenoRisk } from '@/config/keno-payouts';
import { plinkoMultipliers, type PlinkoRisk } from '@/config/plinko-multipliers';
import { PUMP_MULTIPLIERS, PUMP_POPS, PUMP_POSITIONS, type PumpDifficulty } from '@/config/game-tables';

// The provably-fair scheme (Stake's; internal/fair), recomputed in the browser with
// WebCrypto so a player need not trust the server's own verification:
//  - round r of a bet yields HMAC-SHA256(key = server seed as UTF-8 text,
//    message = `${clientSeed}:${nonce}:${r}`), 32 bytes, read in order;
//  - every 4 bytes make a float b0/256 + b1/256² + b2/256³ + b3/256⁴ in [0, 1);
//  - games turn floats into events: floor(f × n), or draws without replacement in
//    which the i-th float × (remaining count), floored, indexes the ascending pool.

const encoder = new TextEncoder();

function subtle(): SubtleCrypto {
  const s = globalThis.crypto.subtle as SubtleCrypto | undefined;
  if (!s) throw new Error('This browser cannot verify bets (WebCrypto needs a secure context).');
  return s;
}

/** sha256Hex is the lowercase hex SHA-256 of a text, the commitment shown before play. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await subtle().digest('SHA-256', encoder.encode(text)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** bytesToFloat reads 4 bytes from offset as b0/256 + b1/256² + b2/256³ + b3/256⁴. */
export function bytesToFloat(bytes: Uint8Array, offset: number): number {
  let f = 0;
  let scale = 1;
  for (let i = 0; i < 4; i++) {
    scale *= 256;
    f += (bytes[offset + i] ?? 0) / scale;
  }
  return f;
}

/** floats returns the first count floats of a bet's stream. */
export async function floats(serverSeed: string, clientSeed: string, nonce: number, count: number): Promise<number[]> {
  const key = await subtle().importKey('raw', encoder.encode(serverSeed), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  const out: number[] = [];
  for (let round = 0; out.length < count; round++) {
    const bytes = new Uint8Array(
      await subtle().sign('HMAC', key, encoder.encode(`${clientSeed}:${String(nonce)}:${String(round)}`)),
    );
    for (let offset = 0; offset + 4 <= bytes.length && out.length < count; offset += 4) {
      out.push(bytesToFloat(bytes, offset));
    }
  }
  return out;
}

/** sample draws k of 0 … n − 1 without replacement: the i-th float × (n − i), floored, indexes what is left. */
export function sample(fs: readonly number[], n: number, k: number): number[] {
  const pool = Array.from({ length: n }, (_, i) => i);
  return fs.slice(0, k).map((f, i) => pool.splice(Math.floor(f * (n - i)), 1)[0] ?? 0);
}

export const CARD_RANKS = ['2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K', 'A'] as const;
export const CARD_SUITS = ['diamonds', 'hearts', 'spades', 'clubs'] as const;
const SUIT_SYMBOLS: Record<(typeof CARD_SUITS)[number], string> = {
  diamonds: '♦',
  hearts: '♥',
  spades: '♠',
  clubs: '♣',
};

/** cardAt is CARDS[floor(f × 52)]: rank-major, 2♦ 2♥ 2♠ 2♣ 3♦ … A♣. */
export function cardAt(f: number): { index: number; label: string; value: number; rank: number } {
  const index = Math.floor(f * 52);
  const rank = Math.floor(index / 4);
  const suit = CARD_SUITS[index % 4] ?? 'diamonds';
  const value = rank === 12 ? 11 : rank >= 8 ? 10 : rank + 2;
  return { index, label: `${CARD_RANKS[rank] ?? '?'}${SUIT_SYMBOLS[suit]}`, value, rank };
}

// ---- Games -------------------------------------------------------------------------

/** diceRoll is floor(f × 10001) / 100: 0.00 … 100.00. */
export function diceRoll(f: number): number {
  return Math.floor(f * 10001) / 100;
}

/** diceMultiplier is 99 / target to 2 decimals, halves up (as the server pays). */
export function diceMultiplier(target: number): number {
  const tenths = Math.round(target * 10);
  return Math.floor((2 * 99000 + tenths) / (2 * tenths)) / 100;
}

/** minesMultiplier is 0.99 × C(25, gems)/C(25 − mines, gems) to 2 decimals, ties down; 1 for no gems. */
export function minesMultiplier(mines: number, gems: number): number {
  if (gems === 0) return 1;
  const c = (n: number, k: number) => {
    let r = 1;
    for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
    return Math.round(r);
  };
  const num = 99 * c(25, gems);
  const den = c(25 - mines, gems);
  let q = Math.floor(num / den);
  if (2 * (num % den) > den) q++;
  return q / 100;
}

function handScore(cards: readonly { value: number }[]): { total: number; soft: boolean } {
  let total = 0;
  let aces = 0;
  for (const c of cards) {
    total += c.value;
    if (c.value === 11) aces++;
  }
  while (total > 21 && aces > 0) {
    total -= 10;
    aces--;
  }
  return { total, soft: aces > 0 };
}

const handValue = (cards: readonly { value: number }[]) => handScore(cards).total;

/** Params are a bet's parameters as the server records them (Bet.params). */
export interface BetParams {
  target?: string | number;
  rows?: number;
  risk?: string;
  picks?: number[];
  mines?: number;
  reveals?: number[];
  difficulty?: string;
  pumps?: number;
  actions?: string;
  /** rules is the blackjack rule set: 1 split and insurance, absent for the classic rules. */
  rules?: number;
}

/** Verification is the browser's recomputation of a bet: display lines and the fields compared with the record. */
export interface Verification {
  lines: [string, string][];
  /** outcome holds the fields that must equal the server's recorded outcome. */
  outcome: Record<string, unknown>;
}

type Card = ReturnType<typeof cardAt>;

const BJ_RESULTS: Record<string, string> = {
  blackjack: 'Blackjack! You win',
  dealer_bust: 'Dealer busts! You win',
  win: 'You win',
  push: 'Push',
  lose: 'Dealer wins',
  dealer_blackjack: 'Dealer has Blackjack! Dealer wins',
  bust: 'Bust! Dealer wins',
  even_money: 'Even money! You win',
};

const BJ_RETURNS: Record<string, number> = { blackjack: 2.5, dealer_bust: 2, win: 2, push: 1, even_money: 2 };

/**
 * playBlackjack replays a game as internal/games/blackjack plays it. rules 0 are the classic
 * rules (no split, no insurance); rules 1 add split (one, same rank; split aces one card each;
 * double after split), insurance and even money, offered before the dealer peeks when the up
 * card is an ace. Actions: h hit, s stand, d double, p split, i take insurance (even money with
 * a natural), n decline. An action the rules refuse makes the replay invalid (null).
 */
export function playBlackjack(deck: Card[], actions: string, rules = 0) {
  const card = (i: number): Card => {
    const c = deck[i];
    if (!c) throw new Error('The game ran out of pre-generated cards');
    return c;
  };
  const hands: Card[][] = [[card(0), card(2)]];
  const dealer = [card(1), card(3)];
  const outcomes: string[] = [''];
  const doubled = [false];
  let next = 4;
  let active = 0;
  let insurance = '';
  const natural = (h: Card[]) => h.length === 2 && handValue(h) === 21;
  const peek = () => {
    const [p, d] = [natural(hands[0] ?? []), natural(dealer)];
    if (p && d) outcomes[0] = 'push';
    else if (p) outcomes[0] = 'blackjack';
    else if (d) outcomes[0] = 'dealer_blackjack';
  };
  const over = () => outcomes.every((o) => o !== '');
  const draw = (hand: Card[]) => hand.push(card(next++));
  const dealerPlays = () => {
    if (outcomes.every((o) => o !== '')) return;
    while (handValue(dealer) < 17) draw(dealer);
    const d = handValue(dealer);
    hands.forEach((h, i) => {
      if (outcomes[i] !== '') return;
      const p = handValue(h);
      outcomes[i] = d > 21 ? 'dealer_bust' : p > d ? 'win' : p === d ? 'push' : 'lose';
    });
  };
  const nextHand = () => {
    if (hands.length === 2 && active === 0) {
      active = 1;
      if (handValue(hands[1] ?? []) === 21) nextHand();
      return;
    }
    dealerPlays();
  };
  if (rules === 1 && dealer[0]?.value === 11) insurance = 'offered';
  else peek();
  const refuse = (why: string) => {
    throw new Error(why);
  };
  for (const action of actions.toLowerCase()) {
    if (over()) refuse('Game is already over');
    const h = hands[active] ?? [];
    const pending = insurance === 'offered';
    if (pending && 'hsdp'.includes(action)) refuse('Accept or decline insurance first');
    switch (action) {
      case 'h':
        draw(h);
        if (handValue(h) > 21) {
          outcomes[active] = 'bust';
          nextHand();
        } else if (handValue(h) === 21) nextHand();
        break;
      case 's':
        nextHand();
        break;
      case 'd':
        if (h.length !== 2) refuse('You can only double down on your first two cards');
        doubled[active] = true;
        draw(h);
        if (handValue(h) > 21) outcomes[active] = 'bust';
        nextHand();
        break;
      case 'p': {
        const first = hands[0] ?? [];
        if (rules !== 1 || hands.length !== 1 || first.length !== 2 || first[0]?.rank !== first[1]?.rank)
          refuse('Split is not allowed now');
        const second: Card[] = first.splice(1, 1);
        hands.push(second);
        outcomes.push('');
        doubled.push(false);
        draw(first);
        draw(second);
        if (first[0]?.value === 11) {
          active = 1;
          dealerPlays();
        } else if (handValue(first) === 21) nextHand();
        break;
      }
      case 'i':
      case 'n':
        if (rules !== 1 || !pending) refuse('Insurance is not offered now');
        if (action === 'i' && natural(h)) {
          insurance = 'even_money';
          outcomes[0] = 'even_money';
        } else {
          insurance = action === 'i' ? 'taken' : 'declined';
          peek();
        }
        break;
      default:
        refuse(`blackjack action ${action}`);
    }
  }
  const done = over();
  const insurancePays = done && insurance === 'taken' && natural(dealer);
  // Stakes and returns in 1e-4 units, as the server's multipliers, so the arithmetic is exact.
  let stakes = 10000 * (hands.length + doubled.filter(Boolean).length) + (insurance === 'taken' ? 5000 : 0);
  let ret = 0;
  if (done) {
    outcomes.forEach((o, i) => {
      ret += 10000 * (BJ_RETURNS[o] ?? 0) * (doubled[i] ? 2 : 1);
    });
    if (insurancePays) ret += 15000;
  }
  if (stakes <= 0) stakes = 10000;
  let result = '';
  if (done) {
    const texts = outcomes.map((o) => BJ_RESULTS[o] ?? '');
    result = texts.length === 2 ? `Hand 1: ${texts[0] ?? ''}. Hand 2: ${texts[1] ?? ''}` : (texts[0] ?? '');
    if (insurancePays) result += '. Insurance pays 2:1';
  }
  return {
    player: hands[0] ?? [],
    second: hands[1],
    dealer,
    insurance,
    outcome: result,
    stakes: stakes / 10000,
    multiplier: Math.floor((ret * 10000) / stakes) / 10000,
    return: ret / 10000,
  };
}

/** hand writes a hand as the server records it: "J♠ 5♥ (15)", "A♦ 6♣ (17, soft)". */
function hand(cards: readonly Card[]): string {
  const { total, soft } = handScore(cards);
  return `${cards.map((c) => c.label).join(' ')} (${String(total)}${soft ? ', soft' : ''})`;
}

/**
 * recompute replays a bet of game from its seeds and parameters. It supports all six
 * games; the stateful ones replay the player's recorded actions.
 */
export async function recompute(
  game: string,
  seeds: { serverSeed: string; clientSeed: string; nonce: number },
  params: BetParams,
): Promise<Verification> {
  const stream = (count: number) => floats(seeds.serverSeed, seeds.clientSeed, seeds.nonce, count);
  switch (game) {
    case 'dice': {
      const [f = 0] = await stream(1);
      const roll = diceRoll(f);
      const target = Number(params.target);
      const win = roll < target;
      return {
        lines: [
          ['Roll', roll.toFixed(2)],
          ['Target', `under ${String(target)}`],
          ['Result', win ? 'Win' : 'Loss'],
        ],
        outcome: { roll, win, multiplier: win ? diceMultiplier(target) : 0 },
      };
    }
    case 'plinko': {
      const rows = params.rows ?? 8;
      const decisions = (await stream(rows)).map((f) => Math.floor(f * 2));
      const bucket = decisions.reduce((a, b) => a + b, 0);
      const multiplier = plinkoMultipliers((params.risk ?? 'medium') as PlinkoRisk, rows)[bucket] ?? 0;
      return {
        lines: [
          ['Decisions', decisions.map((d) => (d ? 'R' : 'L')).join(' ')],
          ['Bucket', String(bucket)],
          ['Multiplier', `${String(multiplier)}x`],
        ],
        outcome: { decisions, finalBucket: bucket, multiplier },
      };
    }
    case 'keno': {
      const drawn = sample(await stream(10), 40, 10).map((n) => n + 1);
      const picks = params.picks ?? [];
      const matches = drawn.filter((n) => picks.includes(n));
      const multiplier = picks.length
        ? (kenoPayouts((params.risk ?? 'classic') as KenoRisk, picks.length)[matches.length] ?? 0)
        : 0;
      return {
        lines: [
          ['Drawn', drawn.join(', ')],
          ['Matches', matches.join(', ') || 'none'],
          ['Multiplier', `${String(multiplier)}x`],
        ],
        outcome: { drawnNumbers: drawn, matches, multiplier },
      };
    }
    case 'mines': {
      const count = params.mines ?? 1;
      const tiles = sample(await stream(count), 25, count);
      const positions = tiles.map((t) => `${String(Math.floor(t / 5))},${String(t % 5)}`);
      const reveals = params.reveals ?? [];
      const hitIndex = reveals.findIndex((t) => tiles.includes(t));
      const gems = hitIndex === -1 ? reveals.length : hitIndex;
      const status = reveals.length === 0 ? '' : hitIndex === -1 ? 'won' : 'lost';
      const multiplier = status === 'won' ? minesMultiplier(count, gems) : 0;
      return {
        lines: [
          ['Mines', positions.join('  ')],
          ...(status ? ([['Result', `${status}, ${String(multiplier)}x`]] as [string, string][]) : []),
        ],
        outcome: { mineTiles: tiles, ...(status ? { status, multiplier } : {}) },
      };
    }
    case 'pump': {
      const difficulty = (params.difficulty ?? 'medium') as PumpDifficulty;
      const popCount = PUMP_POPS[difficulty];
      const pops = sample(await stream(popCount), PUMP_POSITIONS, popCount).map((p) => p + 1);
      const burstAt = Math.min(...pops);
      const table = PUMP_MULTIPLIERS[difficulty];
      const safePumps = Math.min(burstAt - 1, PUMP_POSITIONS - popCount);
      const pumps = params.pumps ?? 0;
      const status = pumps <= 0 ? '' : pumps >= burstAt ? 'burst' : 'won';
      const multiplier = status === 'won' ? (table[pumps] ?? 0) : 0;
      return {
        lines: [
          ['Pops', pops.join(', ')],
          ['Bursts on pump', String(burstAt)],
          ['Safe pumps', `${String(safePumps)} (${String(table[safePumps] ?? 0)}x)`],
          ...(status ? ([['Result', `${status}, ${String(multiplier)}x`]] as [string, string][]) : []),
        ],
        outcome: { pops, burstAt, safePumps, ...(status ? { status, multiplier } : {}) },
      };
    }
    case 'blackjack': {
      const deck = (await stream(52)).map(cardAt);
      const rules = params.rules ?? 0;
      const played = playBlackjack(deck, params.actions ?? '', rules);
      const lines: [string, string][] = [['Player', hand(played.player)]];
      if (played.second) lines.push(['Second hand', hand(played.second)]);
      lines.push(['Dealer', hand(played.dealer)]);
      if (played.insurance) lines.push(['Insurance', played.insurance.replace('_', ' ')]);
      lines.push(['Result', played.outcome || 'in play']);
      return {
        lines,
        outcome: {
          player: hand(played.player),
          dealer: hand(played.dealer),
          result: played.outcome,
          multiplier: played.multiplier,
          stakes: played.stakes,
          // The split rules record these only when set (the server omits empty ones).
          ...(played.second ? { second: hand(played.second) } : {}),
          ...(played.insurance ? { insurance: played.insurance } : {}),
          ...(rules === 1 && played.return > 0 ? { return: played.return } : {}),
          ...(rules === 1 ? { rules } : {}),
        },
      };
    }
    default:
      throw new Error(`Unknown game ${game}`);
  }
}

/**
 * mismatches lists the fields of the browser's outcome that differ from the server's
 * recorded outcome (compared by value; numbers like "1.24" and 1.24 are equal).
 */
export function mismatches(outcome: Record<string, unknown>, recorded: Record<string, unknown>): string[] {
  const same = (a: unknown, b: unknown): boolean => {
    if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
    if (typeof a === 'number' || typeof b === 'number') return Number(a) === Number(b);
    return a === b;
  };
  return Object.keys(outcome).filter((key) => !same(outcome[key], recorded[key]));
}
