import { screen, waitFor, within } from '@testing-library/react';
import { fairness, gameApi } from '@/testing/game-api';
import { json } from '@/testing/mock-api';
import { player, renderApp } from '@/testing/test-utils';

// Split, insurance and even money on the Blackjack screen (issue 19): the reducer's new
// moves, driven through the screen against a mocked /api.

const notifications = () => within(screen.getByRole('region', { name: 'Notifications' }));
const card = (value: string, suit: string, numericValue: number) => ({ value, suit, numericValue, hidden: false });
const hole = { hidden: true };
const cards = (label: string) =>
  within(screen.getByRole('list', { name: `${label} cards` }))
    .queryAllByRole('listitem')
    .map((li) => li.getAttribute('aria-label'));

const hands = (over: Record<string, unknown> = {}) => ({
  secondHand: [],
  secondValue: 0,
  activeHand: 0,
  canSplit: false,
  canDouble: true,
  insurance: '',
  evenMoney: false,
  doubled: [false],
  handResults: [],
  betAmount: 1,
  ...over,
});

const dealt = (over: Record<string, unknown> = {}, h: Record<string, unknown> = {}) => ({
  success: true,
  gameId: 'bj1',
  playerHand: [card('8', 'spades', 8), card('8', 'hearts', 8)],
  dealerHand: [card('6', 'diamonds', 6), hole],
  result: '',
  winAmount: 0,
  gameOver: false,
  newBalance: 1233.5,
  playerValue: 16,
  dealerValue: 6,
  canDouble: true,
  fairness,
  hands: hands(h),
  ...over,
});

const answer = (over: Record<string, unknown>, h: Record<string, unknown>) => ({
  success: true,
  playerHand: [card('8', 'spades', 8), card('3', 'clubs', 3)],
  dealerHand: [card('6', 'diamonds', 6), hole],
  playerValue: 11,
  dealerValue: 6,
  result: '',
  winAmount: 0,
  gameOver: false,
  newBalance: 1232.5,
  hands: hands(h),
  ...over,
});

async function open() {
  const app = renderApp('/games/blackjack');
  await screen.findByRole('heading', { level: 1, name: 'Blackjack' });
  await screen.findByLabelText('Bet Amount');
  return app;
}

async function deal(user: Awaited<ReturnType<typeof open>>['user']) {
  await user.click(screen.getByRole('button', { name: 'Deal' }));
  await screen.findByText('16', { selector: '[aria-label="Player total"]' });
}

describe('Blackjack split and insurance', () => {
  it('splits a pair, plays hand 1 then hand 2, and shows each result', { timeout: 20000 }, async () => {
    const secondHand = [card('8', 'hearts', 8), card('K', 'spades', 10)];
    const server = gameApi({
      'POST /api/games/blackjack/start': () => json(dealt({}, { canSplit: true })),
      'POST /api/games/blackjack/split': () =>
        json(answer({}, { secondHand, secondValue: 18, doubled: [false, false], betAmount: 2 })),
      'POST /api/games/blackjack/stand': () => {
        const first = server.calls('POST /api/games/blackjack/stand').length === 1;
        return first
          ? json(answer({}, { secondHand, secondValue: 18, activeHand: 1, doubled: [false, false], betAmount: 2 }))
          : json(
              answer(
                {
                  gameOver: true,
                  dealerHand: [card('6', 'diamonds', 6), card('10', 'clubs', 10), card('9', 'hearts', 9)],
                  dealerValue: 25,
                  result: 'Hand 1: Dealer busts! You win. Hand 2: Dealer busts! You win',
                  winAmount: 4,
                  newBalance: 1236.5,
                },
                {
                  secondHand,
                  secondValue: 18,
                  activeHand: 1,
                  canDouble: false,
                  doubled: [false, false],
                  handResults: ['Dealer busts! You win', 'Dealer busts! You win'],
                  betAmount: 2,
                },
              ),
            );
      },
    });
    const { user } = await open();
    await deal(user);
    const splitButton = await screen.findByRole('button', { name: /^Split/ });
    await waitFor(() => {
      expect(splitButton).toBeEnabled();
    });
    await user.click(splitButton);
    expect(await screen.findByRole('list', { name: 'Hand 2 cards' })).toBeInTheDocument();
    expect(server.calls('POST /api/games/blackjack/split')[0]?.body).toEqual({ gameId: 'bj1' });
    expect(cards('Hand 1')).toEqual(['8 of spades', '3 of clubs']);
    expect(cards('Hand 2')).toEqual(['8 of hearts', 'King of spades']);
    expect(screen.getByRole('button', { name: /^Split/ })).toBeDisabled();
    // The bet shows the total stake; hand 1 is in play, and a double is allowed on it.
    expect(screen.getByText('$2.00')).toBeInTheDocument();
    expect(screen.getByRole('list', { name: 'Hand 1 cards' }).closest('[aria-current]')).not.toBeNull();
    expect(screen.getByRole('button', { name: /^Double/ })).toBeEnabled();

    // Stand on hand 1: the game goes on with hand 2.
    await user.click(screen.getByRole('button', { name: /^Stand/ }));
    await waitFor(() => {
      expect(screen.getByRole('list', { name: 'Hand 2 cards' }).closest('[aria-current]')).not.toBeNull();
    });
    expect(screen.getByRole('button', { name: /^Hit/ })).toBeEnabled();

    // Stand on hand 2: the dealer plays, both results show.
    await user.click(screen.getByRole('button', { name: /^Stand/ }));
    expect(
      await screen.findByText('Hand 1: Dealer busts! You win. Hand 2: Dealer busts! You win', undefined, {
        timeout: 4000,
      }),
    ).toBeInTheDocument();
    expect(screen.getAllByText('Dealer busts! You win')).toHaveLength(2);
    expect(screen.getByText('You won: $4.00')).toBeInTheDocument();
  });

  it('refuses to split without the balance for a second bet', { timeout: 15000 }, async () => {
    const server = gameApi(
      { 'POST /api/games/blackjack/start': () => json(dealt({ newBalance: 0.5 }, { canSplit: true })) },
      { user: { ...player, balance: 1.5 } },
    );
    const { user } = await open();
    await deal(user);
    await user.click(await screen.findByRole('button', { name: /^Split/ }));
    expect(await notifications().findByText('Insufficient balance to split')).toBeInTheDocument();
    expect(server.calls('POST /api/games/blackjack/split')).toHaveLength(0);
  });

  it('asks for the insurance decision first, then plays on', { timeout: 15000 }, async () => {
    const server = gameApi({
      'POST /api/games/blackjack/start': () =>
        json(
          dealt(
            {
              playerHand: [card('10', 'spades', 10), card('6', 'hearts', 6)],
              dealerHand: [card('A', 'clubs', 11), hole],
            },
            { insurance: 'offered', canDouble: false },
          ),
        ),
      'POST /api/games/blackjack/insurance': () =>
        json(
          answer(
            {
              playerHand: [card('10', 'spades', 10), card('6', 'hearts', 6)],
              dealerHand: [card('A', 'clubs', 11), hole],
            },
            { insurance: 'declined' },
          ),
        ),
    });
    const { user } = await open();
    await deal(user);
    expect(await screen.findByText(/Insurance costs \$0\.50 and pays 2:1/)).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /^Hit/ })).toBeNull();
    const decline = screen.getByRole('button', { name: 'Decline' });
    await waitFor(() => {
      expect(decline).toBeEnabled();
    });
    await user.click(decline);
    expect(await screen.findByRole('button', { name: /^Hit/ })).toBeEnabled();
    expect(server.calls('POST /api/games/blackjack/insurance')[0]?.body).toEqual({ gameId: 'bj1', accept: false });
    expect(screen.queryByRole('button', { name: 'Decline' })).toBeNull();
    expect(screen.getByRole('button', { name: /^Double/ })).toBeEnabled();
  });

  it('takes even money with a natural against an ace', { timeout: 15000 }, async () => {
    const server = gameApi({
      'POST /api/games/blackjack/start': () =>
        json(
          dealt(
            {
              playerHand: [card('A', 'spades', 11), card('K', 'hearts', 10)],
              dealerHand: [card('A', 'clubs', 11), hole],
              playerValue: 21,
            },
            { insurance: 'offered', evenMoney: true, canDouble: false },
          ),
        ),
      'POST /api/games/blackjack/insurance': () =>
        json(
          answer(
            {
              playerHand: [card('A', 'spades', 11), card('K', 'hearts', 10)],
              dealerHand: [card('A', 'clubs', 11), card('7', 'clubs', 7)],
              playerValue: 21,
              gameOver: true,
              result: 'Even money! You win',
              winAmount: 2,
              newBalance: 1235.5,
            },
            { insurance: 'even_money', canDouble: false, handResults: ['Even money! You win'] },
          ),
        ),
    });
    const { user } = await open();
    await user.click(screen.getByRole('button', { name: 'Deal' }));
    expect(await screen.findByText(/Even money pays 1:1 now/)).toBeInTheDocument();
    const evenMoney = screen.getByRole('button', { name: 'Even money' });
    await waitFor(() => {
      expect(evenMoney).toBeEnabled();
    });
    await user.click(evenMoney);
    expect(await screen.findByText('Even money! You win', undefined, { timeout: 4000 })).toBeInTheDocument();
    expect(server.calls('POST /api/games/blackjack/insurance')[0]?.body).toEqual({ gameId: 'bj1', accept: true });
    expect(screen.getByText('You won: $2.00')).toBeInTheDocument();
  });

  it(
    'resumes a split game, and the next deal takes the original stake, not the total',
    { timeout: 15000 },
    async () => {
      const secondHand = [card('8', 'hearts', 8), card('K', 'spades', 10)];
      const split = { secondHand, secondValue: 18, activeHand: 1, doubled: [false, false], betAmount: 2 };
      gameApi({
        'GET /api/games/active': () =>
          json({
            mines: null,
            pump: null,
            blackjack: {
              gameId: 'bj9',
              // The total stake: two of 1.
              betAmount: 2,
              playerHand: [card('8', 'spades', 8), card('3', 'clubs', 3)],
              dealerHand: [card('6', 'diamonds', 6), hole],
              playerValue: 11,
              dealerValue: 6,
              canDouble: true,
              fairness,
              hands: hands(split),
            },
          }),
        'POST /api/games/blackjack/stand': () =>
          json(
            answer(
              {
                gameOver: true,
                dealerHand: [card('6', 'diamonds', 6), card('10', 'clubs', 10), card('9', 'hearts', 9)],
                dealerValue: 25,
                result: 'Hand 1: Dealer busts! You win. Hand 2: Dealer busts! You win',
                winAmount: 4,
                newBalance: 1236.5,
              },
              { ...split, canDouble: false, handResults: ['Dealer busts! You win', 'Dealer busts! You win'] },
            ),
          ),
      });
      const { user } = await open();
      const stand = await screen.findByRole('button', { name: /^Stand/ });
      expect(cards('Hand 2')).toEqual(['8 of hearts', 'King of spades']);
      expect(screen.getByRole('list', { name: 'Hand 2 cards' }).closest('[aria-current]')).not.toBeNull();
      expect(screen.getByText('$2.00')).toBeInTheDocument();
      await user.click(stand);
      await user.click(await screen.findByRole('button', { name: 'New Game' }, { timeout: 4000 }));
      expect(await screen.findByLabelText('Bet Amount')).toHaveValue(1);
    },
  );

  it('states the rules', async () => {
    gameApi();
    await open();
    expect(screen.getByText('Rules')).toBeInTheDocument();
    expect(screen.getByText(/Split two cards of the same rank/)).toBeInTheDocument();
    expect(screen.getByText(/RTP with best play: 99\.43%/)).toBeInTheDocument();
  });
});
