// The six games against the real server, as one player in one browser (the
// tests run in order and share the page): registers, plays every game to a
// win or a loss, checks the header's balance against GET /api/auth/user after
// each, resumes a Mines game after a reload, verifies a bet in the fairness
// panel, checks every screen at 360 px, and measures Plinko's frames while
// 20 balls fall. Needs the bet rate limit off (FAIRPLAY_RATE_BETS_USER=0) for
// the Plinko burst. Screenshots: test/artifacts/e2e/games/.
import { mkdir } from 'node:fs/promises';
import { api, artifacts, baseURL, expect, figure, guardContext, login, test, uniqueName, type Page } from './fixtures';
import type { BrowserContext } from '@playwright/test';

const PASSWORD = 'Games!e2e1';

const cents = new Intl.NumberFormat('en-US', {
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
  roundingMode: 'trunc',
});

test.describe.configure({ mode: 'serial' });

let context: BrowserContext;
let page: Page;
const problems: string[] = [];
let username = '';
/**
 * The player's own session for checks from outside the page: the page keeps
 * its tokens in memory (web/src/lib/tokens.ts), out of the test's reach.
 */
let checkToken = '';
let checks = 0;

/** ok records one passed check and prints it. */
function ok(message: string) {
  checks += 1;
  console.log(`     ok ${checks} ${message}`);
}

test.beforeAll(async ({ browser }) => {
  context = await browser.newContext({ baseURL, viewport: { width: 1280, height: 900 } });
  await guardContext(context, problems);
  page = await context.newPage();
});

test.afterEach(() => {
  expect(problems, 'page errors, CSP violations or console errors').toEqual([]);
});

test.afterAll(async () => {
  await context.close();
  console.log(`     games: ${checks} checks passed`);
});

async function snap(name: string) {
  await mkdir(`${artifacts}games`, { recursive: true });
  await page.screenshot({ path: `${artifacts}games/${name}.png`, fullPage: true });
}

/** serverBalance reads the balance the server holds (GET /api/auth/user). */
async function serverBalance() {
  const res = await api('GET', '/api/auth/user', undefined, checkToken);
  expect(res.status, 'GET /api/auth/user for the balance check').toBe(200);
  return res.json?.user.balance ?? NaN;
}

/** expectHeaderBalance waits until the header shows the server's balance (truncated to cents). */
async function expectHeaderBalance(game: string) {
  const balance = await serverBalance();
  const want = `$${cents.format(balance)}`;
  await expect(page.getByTestId('balance'), `${game}: header balance`).toHaveText(want);
  ok(`${game}: header balance ${want} equals GET /api/auth/user`);
  return balance;
}

/** toast waits for a notification with exactly text. */
async function toast(text: string) {
  await expect(page.getByRole('region', { name: 'Notifications' }).getByText(text, { exact: true })).toBeVisible();
}

async function setBet(amount: number) {
  await page.getByLabel('Bet Amount').fill(String(amount));
}

test('register a player', async () => {
  username = uniqueName('games');
  await page.goto('/');
  await page.getByRole('button', { name: 'Register' }).click();
  const dialog = page.getByRole('dialog', { name: 'Register' });
  await dialog.getByLabel('Username').fill(username);
  await dialog.getByLabel('Email').fill(`${username}@example.com`);
  await dialog.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await dialog.getByLabel('Confirm Password').fill(PASSWORD);
  await dialog.getByLabel('I am not a robot (development check)').check();
  await dialog.getByRole('button', { name: 'Register' }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByText(username, { exact: true }).filter({ visible: true }).first()).toBeVisible();
  const res = await login(username, PASSWORD);
  expect(res.status, 'sign-in for the balance checks').toBe(200);
  checkToken = res.json?.token ?? '';
  ok(`registered ${username}`);
});

test('dice', async () => {
  await page.goto('/games/dice');
  await expect(page.getByRole('heading', { level: 1, name: 'Dice' })).toBeVisible();
  await expect(page.getByText('Place a bet and roll the dice to see your result.')).toBeVisible();
  await setBet(0);
  await page.getByRole('button', { name: 'Roll Dice' }).click();
  await toast('Please enter a valid bet amount');
  await setBet(1e9);
  await page.getByRole('button', { name: 'Roll Dice' }).click();
  await toast('Insufficient balance');
  ok('dice: client validation messages');
  await setBet(1);
  await page.getByRole('button', { name: '½' }).click();
  await expect(page.getByLabel('Bet Amount')).toHaveValue('0.5');
  await page.getByRole('button', { name: '2×' }).click();
  await page.getByRole('button', { name: 'Roll Dice' }).click();
  const results = page.getByRole('region', { name: 'Results' });
  const outcome = results.getByText(/^(WIN|LOSE)!$/);
  await expect(outcome).toBeVisible();
  ok(`dice: rolled ${await results.getByText(/^\d+\.\d\d$/).textContent()} → ${await outcome.textContent()}`);
  await expectHeaderBalance('dice');
  await snap('dice');
});

test('mines: a lost game, a game resumed after a reload, a cash-out', async () => {
  await page.goto('/games/mines');
  await expect(page.getByRole('heading', { level: 1, name: 'Mines' })).toBeVisible();
  const board = page.getByRole('group', { name: 'Mines board' });
  const cashOut = page.getByRole('button', { name: /^Cash Out/ });

  // Play until a gem is found, then reload mid-game.
  let resumedTile: string | null = null;
  for (let attempt = 0; attempt < 10 && !resumedTile; attempt++) {
    await page.getByRole('button', { name: 'Play' }).click();
    await expect(cashOut).toBeVisible();
    await board.getByRole('button', { name: 'Row 3, column 3, hidden' }).click();
    const after = board.getByRole('button', { name: /^Row 3, column 3, (gem|mine)$/ });
    await expect(after).toBeVisible();
    const label = (await after.getAttribute('aria-label')) ?? '';
    if (label.endsWith('gem')) {
      resumedTile = label;
    } else {
      await expect(page.getByText('Game Over', { exact: true })).toBeVisible();
      ok('mines: a mine ends the game with Game Over');
      await expectHeaderBalance('mines (lost)');
    }
  }
  expect(resumedTile, 'mines: found a gem within 10 games').toBeTruthy();
  await page.reload();
  await expect(board.getByRole('button', { name: resumedTile ?? '' })).toBeVisible();
  await expect(cashOut).toHaveText(/^Cash Out \$\d+\.\d\d$/);
  ok(`mines: the running game resumed after a reload (${await cashOut.textContent()})`);
  await cashOut.click();
  await expect(page.getByText('You Won!', { exact: true })).toBeVisible();
  ok('mines: cashed out, You Won!');
  await expectHeaderBalance('mines');
  await snap('mines');
});

test('plinko: 20 balls in a burst, frame timing', async () => {
  await page.goto('/games/plinko');
  await expect(page.getByRole('heading', { level: 1, name: 'Plinko' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Reset' })).toBeDisabled();
  await setBet(0.1);
  const drop = page.getByRole('button', { name: 'Drop Ball' });
  const rows = page.getByLabel('Rows');

  // Count animation frames while 20 balls fall.
  await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __counting: boolean };
    w.__frames = [];
    w.__counting = true;
    const tick = (t: number) => {
      w.__frames.push(t);
      if (w.__counting) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  // One click per answered drop: the balls fall together, each click waits for the previous bet's response.
  for (let i = 0; i < 20; i++) {
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/games/plinko') && r.request().method() === 'POST'),
      drop.click(),
    ]);
  }
  const dropped = page.getByText('Balls Dropped').locator('xpath=..');
  await expect(dropped.getByText('20', { exact: true })).toBeVisible();
  // The rows slider unlocks once every ball has landed.
  await expect(rows).toBeEnabled();
  const frames = await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __counting: boolean };
    w.__counting = false;
    return w.__frames;
  });
  const intervals = frames.slice(1).map((t, i) => t - (frames[i] ?? t));
  const elapsed = (frames.at(-1) ?? 0) - (frames[0] ?? 0);
  const expected = Math.round(elapsed / (1000 / 60));
  const missed = intervals.reduce((n, d) => n + Math.max(0, Math.round(d / (1000 / 60)) - 1), 0);
  const worst = Math.max(...intervals);
  figure(
    'plinko frames',
    `${frames.length} callbacks in ${elapsed.toFixed(0)} ms (≈${expected} at 60 fps), ` +
      `${missed} dropped, longest frame ${worst.toFixed(1)} ms, ${((frames.length / elapsed) * 1000).toFixed(1)} fps`,
  );
  ok('plinko: 20 balls dropped and landed');
  // Last Win shows a ball's win when it lands (the result keeps its suspense while it falls).
  await expect(page.getByText('Last Win').locator('xpath=..')).toHaveText(/Last Win\$\d+\.\d\d$/);
  ok('plinko: Last Win shows the last landed ball');
  await expectHeaderBalance('plinko');
  await snap('plinko');
  await page.getByRole('button', { name: 'Reset' }).click();
  await expect(dropped.getByText('0', { exact: true })).toBeVisible();
  ok('plinko: Reset clears the totals');
});

test('pump', async () => {
  await page.goto('/games/pump');
  await expect(page.getByRole('heading', { level: 1, name: 'Pump' })).toBeVisible();
  await expect(page.getByText('Place your bet and start pumping')).toBeVisible();
  await expect(page.getByLabel('Difficulty')).toHaveValue('medium');
  await page.getByLabel('Difficulty').selectOption('easy');
  await page.getByRole('button', { name: 'Start Game' }).click();
  const pump = page.getByRole('button', { name: 'Pump', exact: true });
  await expect(pump).toBeVisible();
  await expect(page.getByLabel('Difficulty')).toBeDisabled();
  await expect(page.getByText(/^Potential win: \$/)).toBeVisible();
  const pumps = page.getByText('Pumps', { exact: true }).locator('xpath=..');
  const burstText = page.getByText('Balloon Burst!');
  let burst = false;
  for (let i = 0; i < 3 && !burst; i++) {
    await pump.click();
    await expect(
      pumps
        .getByText(String(i + 1), { exact: true })
        .or(burstText)
        .first(),
    ).toBeVisible();
    burst = await burstText.isVisible();
  }
  if (burst) {
    ok('pump: Balloon Burst!');
  } else {
    await page.getByRole('button', { name: 'Cash Out' }).click();
    const success = page.getByText(/^Success! You won \$\d/);
    await expect(success).toBeVisible();
    ok(`pump: ${await success.textContent()}`);
  }
  await expectHeaderBalance('pump');
  await snap('pump');
});

test('keno', async () => {
  await page.goto('/games/keno');
  await expect(page.getByRole('heading', { level: 1, name: 'Keno' })).toBeVisible();
  await page.getByRole('button', { name: 'Draw Numbers' }).click();
  await toast('Please select at least one number');
  ok('keno: Please select at least one number');
  const board = page.getByRole('group', { name: 'Keno numbers' });
  for (const n of [3, 11, 19, 27, 35]) await board.getByRole('button', { name: String(n), exact: true }).click();
  await expect(page.getByText('5/10')).toBeVisible();
  await page.getByRole('button', { name: 'Draw Numbers' }).click();
  const result = page.getByText(/^(Win: \$[\d,.]+|No win)$/);
  await expect(result).toBeVisible();
  ok(`keno: ${await result.textContent()}`);
  await expectHeaderBalance('keno');
  await page.getByRole('button', { name: 'Play Again' }).click();
  await expect(result).toBeVisible();
  ok('keno: Play Again with the same numbers');
  await page.getByRole('button', { name: 'Edit' }).click();
  await expect(page.getByRole('button', { name: 'Play With Selected Numbers' })).toBeVisible();
  await page.getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByRole('button', { name: 'Reset' })).toBeVisible();
  await expectHeaderBalance('keno');
  await snap('keno');
});

test('blackjack', async () => {
  await page.goto('/games/blackjack');
  await expect(page.getByRole('heading', { level: 1, name: 'Blackjack' })).toBeVisible();
  await expect(page.getByText('Place your bet and deal to start the game')).toBeVisible();
  await page.getByRole('button', { name: 'Deal' }).click();
  const banner = page.getByText(/(You win|Push|Dealer wins)/).first();
  const hit = page.getByRole('button', { name: /^Hit/ });
  const decline = page.getByRole('button', { name: /^Decline/ });
  const playing = page.locator('button[aria-keyshortcuts="H"]:not([disabled])');
  await expect(banner.or(playing).or(decline).first()).toBeVisible();
  if (await decline.isVisible()) {
    // The dealer shows an ace: insurance (or even money) is offered before anything else.
    await decline.click();
    ok('blackjack: declined the insurance offer');
    await expect(banner.or(playing).first()).toBeVisible();
  }
  if (!(await banner.isVisible())) {
    await page.getByRole('button', { name: /^Stand/ }).click();
    ok('blackjack: stood');
  } else {
    ok('blackjack: the deal ended the game (a natural)');
  }
  await expect(banner).toBeVisible();
  ok(`blackjack: ${await banner.textContent()}`);
  await expect(hit).toHaveCount(0);
  await expectHeaderBalance('blackjack');
  await snap('blackjack');
  await page.getByRole('button', { name: 'New Game' }).click();
  await expect(page.getByText('Place your bet and deal to start the game')).toBeVisible();
});

test('fairness: rotate the seed pair and verify the latest bet', async () => {
  await page.getByRole('button', { name: 'Fairness' }).click();
  const dialog = page.getByRole('dialog', { name: 'Fairness' });
  await expect(dialog.getByText('Active server seed (SHA-256)')).toBeVisible();
  await dialog.getByRole('button', { name: 'Rotate Seed Pair' }).click();
  await expect(dialog.getByText('Previous seed pair revealed')).toBeVisible();
  ok('fairness: rotation reveals the server seed');
  await dialog.getByRole('tab', { name: 'My Bets' }).click();
  const list = dialog.getByRole('list', { name: 'My Bets' });
  await list.getByRole('button').first().click();
  await expect(dialog.getByText('✓ Verified in your browser: the result matches the record')).toBeVisible();
  await expect(dialog.getByText('The server recomputes the same result')).toBeVisible();
  ok('fairness: the latest bet verifies in the browser and on the server');
  await snap('fairness');
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
});

test('every game fits a 360 px screen', async () => {
  await page.setViewportSize({ width: 360, height: 740 });
  for (const slug of ['dice', 'mines', 'plinko', 'pump', 'keno', 'blackjack']) {
    await page.goto(`/games/${slug}`);
    await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
    await expect(page.getByTestId('game-board')).toBeVisible();
    await expect
      .poll(() => page.evaluate(() => document.documentElement.scrollWidth), {
        message: `${slug} overflows at 360 px`,
      })
      .toBeLessThanOrEqual(360);
    await snap(`${slug}-360`);
  }
  ok('every game fits a 360 px screen');
  figure('games checks', `${checks} checks passed (24 in a run without a lost Mines game)`);
});
