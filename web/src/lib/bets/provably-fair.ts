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
export function cardAt(f: number): { index: number; label: string; value: number } {
  const index = Math.floor(f * 52);
  const rank = Math.floor(index / 4);
  const suit = CARD_SUITS[index % 4] ?? 'diamonds';
  const value = rank === 12 ? 11 : rank >= 8 ? 10 : rank + 2;
  return { index, label: `${CARD_RANKS[rank] ?? '?'}${SUIT_SYMBOLS[suit]}`, value };
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
}

/** Verification is the browser's recomputation of a bet: display lines and the fields compared with the record. */
export interface Verification {
  lines: [string, string][];
  /** outcome holds the fields that must equal the server's recorded outcome. */
  outcome: Record<string, unknown>;
}

type Card = ReturnType<typeof cardAt>;

function playBlackjack(deck: Card[], actions: string) {
  const player = [deck[0], deck[2]].filter((c): c is Card => c !== undefined);
  const dealer = [deck[1], deck[3]].filter((c): c is Card => c !== undefined);
  let next = 4;
  let doubled = false;
  const natural = (h: Card[]) => h.length === 2 && handValue(h) === 21;
  let outcome = '';
  if (natural(player) && natural(dealer)) outcome = 'Push';
  else if (natural(player)) outcome = 'Blackjack! You win';
  else if (natural(dealer)) outcome = 'Dealer has Blackjack! Dealer wins';
  const draw = (hand: Card[]) => {
    const card = deck[next++];
    if (card) hand.push(card);
  };
  const dealerPlays = () => {
    while (handValue(dealer) < 17 && next < deck.length) draw(dealer);
    const p = handValue(player);
    const d = handValue(dealer);
    outcome = d > 21 ? 'Dealer busts! You win' : p > d ? 'You win' : p === d ? 'Push' : 'Dealer wins';
  };
  for (const action of actions.toLowerCase()) {
    if (outcome) break;
    if (action === 'h') {
      draw(player);
      const p = handValue(player);
      if (p > 21) outcome = 'Bust! Dealer wins';
      else if (p === 21) dealerPlays();
    } else if (action === 's') {
      dealerPlays();
    } else if (action === 'd') {
      doubled = true;
      draw(player);
      if (handValue(player) > 21) outcome = 'Bust! Dealer wins';
      else dealerPlays();
    }
  }
  const multipliers: Record<string, number> = {
    'Blackjack! You win': 2.5,
    'Dealer busts! You win': 2,
    'You win': 2,
    Push: 1,
  };
  return { player, dealer, outcome, doubled, multiplier: multipliers[outcome] ?? 0 };
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
      const played = playBlackjack(deck, params.actions ?? '');
      return {
        lines: [
          ['Player', hand(played.player)],
          ['Dealer', hand(played.dealer)],
          ['Result', played.outcome || 'in play'],
        ],
        outcome: {
          player: hand(played.player),
          dealer: hand(played.dealer),
          result: played.outcome,
          multiplier: played.multiplier,
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
