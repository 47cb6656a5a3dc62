import { canDoubleDown, cardName, handTotal, resultTone, suitOf, type Card } from './hand';

const card = (value: string, numericValue: number, suit = 'spades'): Card => ({
  value,
  suit,
  numericValue,
  hidden: false,
});
const hidden: Card = { hidden: true };

describe('handTotal', () => {
  it.each<[string, Card[], number]>([
    ['an empty hand', [], 0],
    ['plain cards', [card('10', 10), card('7', 7)], 17],
    ['a soft hand', [card('A', 11), card('6', 6)], 17],
    ['an ace reduced', [card('A', 11), card('6', 6), card('9', 9)], 16],
    ['two aces', [card('A', 11), card('A', 11)], 12],
    ['blackjack', [card('A', 11), card('K', 10)], 21],
    ['three aces and a nine', [card('A', 11), card('A', 11), card('A', 11), card('9', 9)], 12],
    ['a bust', [card('K', 10), card('Q', 10), card('5', 5)], 25],
    ['the dealer with a hidden card', [card('10', 10, 'hearts'), hidden], 10],
    ['an ace up with a hidden card', [card('A', 11), hidden], 11],
  ])('totals %s', (_, cards, want) => {
    expect(handTotal(cards)).toBe(want);
  });
});

describe('suitOf and cardName', () => {
  it('draws hearts and diamonds red, the others black', () => {
    expect(suitOf('hearts')).toEqual({ symbol: '♥', red: true });
    expect(suitOf('diamonds')).toEqual({ symbol: '♦', red: true });
    expect(suitOf('spades')).toEqual({ symbol: '♠', red: false });
    expect(suitOf('clubs')).toEqual({ symbol: '♣', red: false });
  });

  it('reads cards aloud', () => {
    expect(cardName(card('A', 11, 'hearts'))).toBe('Ace of hearts');
    expect(cardName(card('10', 10, 'clubs'))).toBe('10 of clubs');
    expect(cardName(hidden)).toBe('Hidden card');
  });
});

describe('resultTone', () => {
  it.each<[string, string]>([
    ['Blackjack! You win', 'win'],
    ['Dealer busts! You win', 'win'],
    ['You win', 'win'],
    ['Push', 'push'],
    ['Dealer wins', 'loss'],
    ['Bust! Dealer wins', 'loss'],
    ['Dealer has Blackjack! Dealer wins', 'loss'],
  ])('%s is %s', (text, tone) => {
    expect(resultTone(text)).toBe(tone);
  });
});

describe('canDoubleDown', () => {
  it('needs two cards and a balance at the deal that covers a second bet', () => {
    expect(canDoubleDown({ cards: 2, balanceAtDeal: 10, stake: 10 })).toBe(true);
    expect(canDoubleDown({ cards: 2, balanceAtDeal: 9.99, stake: 10 })).toBe(false);
    expect(canDoubleDown({ cards: 3, balanceAtDeal: 100, stake: 10 })).toBe(false);
  });
});
