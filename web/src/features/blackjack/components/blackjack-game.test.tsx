import { screen, waitFor, within } from '@testing-library/react';
import { vi } from 'vitest';
import { DEAL_STEP_MS } from '../utils/hand';
import { fairness, gameApi } from '@/testing/game-api';
import { json } from '@/testing/mock-api';
import { player, renderApp } from '@/testing/test-utils';

const notifications = () => within(screen.getByRole('region', { name: 'Notifications' }));
const card = (value: string, suit: string, numericValue: number) => ({ value, suit, numericValue, hidden: false });
const hole = { hidden: true };
const cards = (label: string) =>
  within(screen.getByRole('list', { name: `${label} cards` }))
    .queryAllByRole('listitem')
    .map((li) => li.getAttribute('aria-label'));
const total = (label: string) => screen.getByLabelText(`${label} total`).textContent;

const dealt = (over: Record<string, unknown> = {}) => ({
  success: true,
  gameId: 'bj1',
  playerHand: [card('10', 'spades', 10), card('6', 'hearts', 6)],
  dealerHand: [card('A', 'diamonds', 11), hole],
  result: '',
  winAmount: 0,
  gameOver: false,
  newBalance: 1233.5,
  playerValue: 16,
  dealerValue: 11,
  canDouble: true,
  fairness,
  ...over,
});

/** watchTable records each distinct state of the table as the animations change it. */
function watchTable() {
  let seen: { state: string }[] = [];
  const labels = (name: string) =>
    Array.from(document.querySelectorAll(`[aria-label="${name} cards"] > li`), (li) =>
      li.getAttribute('aria-label'),
    ).join(', ');
  const snapshot = () => {
    if (!document.querySelector('[aria-label="Dealer cards"]')) return;
    const hit = document.querySelector<HTMLButtonElement>('button[aria-keyshortcuts="H"]');
    const actions = hit ? (hit.disabled ? 'hit disabled' : 'hit enabled') : 'no actions';
    const result = document.querySelector('[aria-live] strong') ? 'result' : actions;
    const state = `dealer: ${labels('Dealer')} | player: ${labels('Player')} | ${result}`;
    if (seen.at(-1)?.state !== state) seen.push({ state });
  };
  const observer = new MutationObserver(snapshot);
  observer.observe(document.body, { subtree: true, childList: true, attributes: true });
  return {
    states: () => seen.map((s) => s.state),
    reset: () => {
      seen = [];
    },
    stop: () => {
      observer.disconnect();
    },
  };
}

async function open() {
  const app = renderApp('/games/blackjack');
  await screen.findByRole('heading', { level: 1, name: 'Blackjack' });
  await screen.findByLabelText('Bet Amount');
  return app;
}

describe('Blackjack', () => {
  it('deals card by card, then stands and reveals the dealer before the result', { timeout: 15000 }, async () => {
    window.localStorage.setItem('fairplay.hotkeys', 'on'); // H, S, D and P are hotkeys, off by default
    const server = gameApi({
      'POST /api/games/blackjack/start': () => json(dealt()),
      'POST /api/games/blackjack/stand': () =>
        json({
          success: true,
          dealerHand: [card('A', 'diamonds', 11), card('5', 'clubs', 5), card('K', 'spades', 10)],
          result: 'Dealer wins',
          winAmount: 0,
          newBalance: 1233.5,
          playerHand: [card('10', 'spades', 10), card('6', 'hearts', 6)],
          playerValue: 16,
          dealerValue: 16,
          gameOver: true,
        }),
    });
    const { user } = await open();
    expect(screen.getByText('Place your bet and deal to start the game')).toBeInTheDocument();
    const table = watchTable();
    // The pacing is read from the timers the deal schedules, not from the
    // clock: a loaded machine delays timers, it must not fail the test.
    const timeouts = vi.spyOn(window, 'setTimeout');
    await user.click(screen.getByRole('button', { name: 'Deal' }));
    await waitFor(() => {
      expect(screen.getByRole('button', { name: /^Hit/ })).toBeEnabled();
    });
    // Dealer's first card, player's first, the dealer's hand, the player's hand, 250 ms apart;
    // the actions stay disabled until the last.
    expect(table.states()).toEqual([
      'dealer: Ace of diamonds | player:  | hit disabled',
      'dealer: Ace of diamonds | player: 10 of spades | hit disabled',
      'dealer: Ace of diamonds, Hidden card | player: 10 of spades | hit disabled',
      'dealer: Ace of diamonds, Hidden card | player: 10 of spades, 6 of hearts | hit enabled',
    ]);
    expect(timeouts.mock.calls.map((call) => call[1])).toEqual(
      expect.arrayContaining([DEAL_STEP_MS, 2 * DEAL_STEP_MS, 3 * DEAL_STEP_MS]),
    );
    timeouts.mockRestore();
    expect(total('Dealer')).toBe('11');
    expect(total('Player')).toBe('16');
    expect(screen.getByText('?')).toBeInTheDocument();

    table.reset();
    await user.keyboard('s');
    expect(await screen.findByText('Dealer wins', undefined, { timeout: 4000 })).toBeInTheDocument();
    expect(server.calls('POST /api/games/blackjack/stand')[0]?.body).toEqual({ gameId: 'bj1' });
    // The dealer's cards turn over one at a time before the result appears.
    expect(
      table.states().filter((state) => !state.includes('player: 10 of spades, 6 of hearts | hit enabled')),
    ).toEqual([
      'dealer: Ace of diamonds, Hidden card | player: 10 of spades, 6 of hearts | hit disabled',
      'dealer: Ace of diamonds, 5 of clubs | player: 10 of spades, 6 of hearts | hit disabled',
      'dealer: Ace of diamonds, 5 of clubs, King of spades | player: 10 of spades, 6 of hearts | hit disabled',
      'dealer: Ace of diamonds, 5 of clubs, King of spades | player: 10 of spades, 6 of hearts | result',
    ]);
    table.stop();
    expect(total('Dealer')).toBe('16');
    expect(screen.getByText('Dealer wins').parentElement?.className).toMatch(/loss/);
    expect(screen.queryByText(/^You won:/)).not.toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'New Game' }));
    expect(screen.getByText('Place your bet and deal to start the game')).toBeInTheDocument();
  });

  it('keeps the balance and the win hidden until the dealer is revealed', { timeout: 15000 }, async () => {
    window.localStorage.setItem('fairplay.hotkeys', 'on'); // H, S, D and P are hotkeys, off by default
    gameApi({
      'POST /api/games/blackjack/start': () => json(dealt()),
      'POST /api/games/blackjack/stand': () =>
        json({
          success: true,
          dealerHand: [card('A', 'diamonds', 11), card('5', 'clubs', 5), card('Q', 'spades', 10)],
          result: 'You win',
          winAmount: 2,
          newBalance: 1235.5,
          playerHand: [card('10', 'spades', 10), card('6', 'hearts', 6)],
          playerValue: 16,
          dealerValue: 26,
          gameOver: true,
        }),
    });
    const { user } = await open();
    await screen.findByText('$1,234.50');
    await user.click(screen.getByRole('button', { name: 'Deal' }));
    await waitFor(() => {
      expect(screen.getByRole('button', { name: /^Hit/ })).toBeEnabled();
    });
    // The deal took the stake.
    expect(screen.getByTestId('balance')).toHaveTextContent('$1,233.50');
    await user.keyboard('s');
    // The stand's response is in and the dealer's cards are turning over.
    await waitFor(() => {
      expect(cards('Dealer')).toEqual(['Ace of diamonds', '5 of clubs']);
    });
    expect(screen.getByTestId('balance')).toHaveTextContent('$1,233.50');
    expect(screen.queryByText('You win')).not.toBeInTheDocument();
    expect(await screen.findByText('You win', undefined, { timeout: 4000 })).toBeInTheDocument();
    expect(screen.getByTestId('balance')).toHaveTextContent('$1,235.50');
  });

  it('hits, doubles and shows the win', { timeout: 15000 }, async () => {
    window.localStorage.setItem('fairplay.hotkeys', 'on'); // H, S, D and P are hotkeys, off by default
    const server = gameApi({
      'POST /api/games/blackjack/start': () =>
        json(dealt({ playerHand: [card('5', 'clubs', 5), card('6', 'hearts', 6)] })),
      'POST /api/games/blackjack/double': () =>
        json({
          success: true,
          dealerHand: [card('A', 'diamonds', 11), card('7', 'clubs', 7)],
          playerHand: [card('5', 'clubs', 5), card('6', 'hearts', 6), card('K', 'hearts', 10)],
          playerValue: 21,
          result: 'You win',
          winAmount: 4,
          newBalance: 1236.5,
          dealerValue: 18,
          gameOver: true,
          betAmount: 2,
        }),
    });
    const { user } = await open();
    await user.click(screen.getByRole('button', { name: 'Deal' }));
    const double = await screen.findByRole('button', { name: /^Double/ });
    await screen.findByText('11', { selector: '[aria-label="Player total"]' });
    await user.keyboard('d');
    expect(await screen.findByText('You win', undefined, { timeout: 4000 })).toBeInTheDocument();
    expect(screen.getByText('You won: $4.00')).toBeInTheDocument();
    expect(screen.getByText('You win').parentElement?.className).toMatch(/win/);
    expect(server.calls('POST /api/games/blackjack/double')).toHaveLength(1);
    expect(double).not.toBeInTheDocument();
    expect(screen.getByTestId('balance')).toHaveTextContent('$1,236.50');
  });

  it('refuses to double without the balance for a second bet', { timeout: 15000 }, async () => {
    const server = gameApi(
      { 'POST /api/games/blackjack/start': () => json(dealt({ newBalance: 0.5 })) },
      { user: { ...player, balance: 1.5 } },
    );
    const { user } = await open();
    await user.click(screen.getByRole('button', { name: 'Deal' }));
    await screen.findByText('16', { selector: '[aria-label="Player total"]' });
    await user.click(await screen.findByRole('button', { name: /^Double/ }));
    expect(await notifications().findByText('Insufficient balance to double down')).toBeInTheDocument();
    expect(server.calls('POST /api/games/blackjack/double')).toHaveLength(0);
  });

  it('returns to playing when Stand fails, and resumes a running hand', { timeout: 15000 }, async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    gameApi({
      'GET /api/games/active': () =>
        json({
          mines: null,
          pump: null,
          blackjack: {
            gameId: 'bj7',
            betAmount: 5,
            playerHand: [card('9', 'clubs', 9), card('7', 'diamonds', 7)],
            dealerHand: [card('10', 'hearts', 10), hole],
            playerValue: 16,
            dealerValue: 10,
            canDouble: true,
            fairness,
          },
        }),
      'POST /api/games/blackjack/stand': () => json({ message: 'nope' }, 500),
    });
    const { user } = await open();
    const stand = await screen.findByRole('button', { name: /^Stand/ });
    expect(cards('Player')).toEqual(['9 of clubs', '7 of diamonds']);
    expect(screen.getByText('$5.00')).toBeInTheDocument();
    await user.click(stand);
    expect(await notifications().findByText('Something went wrong. Please try again.')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: /^Stand/ })).toBeEnabled();
    expect(screen.getByRole('button', { name: /^Hit/ })).toBeEnabled();
  });
});
