// End-to-end run of the six games against a running server: registers a player, plays
// every game to a win or a loss, checks the header's balance against GET /api/auth/user
// after each, resumes a Mines game after a reload, verifies a bet in the fairness panel,
// checks every screen at 360 px, and measures Plinko's frames while 20 balls fall.
// Screenshots go to e2e/artifacts/ (gitignored).
//
// Usage: E2E_BASE_URL=http://127.0.0.1:8080 npm run e2e:games
// Needs Chromium at /usr/bin/chromium (or CHROMIUM_PATH) and a server in development
// bot-check mode (no TURNSTILE_SECRET_KEY), with the bet rate limit off
// (FAIRPLAY_RATE_BETS_USER=0) for the Plinko burst.
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { watchCSP } from './csp.mjs';

const baseURL = process.env.E2E_BASE_URL;
if (!baseURL) {
  console.error('E2E_BASE_URL is required, e.g. E2E_BASE_URL=http://127.0.0.1:8080');
  process.exit(2);
}
/** PASSWORD is the player's password. */
const PASSWORD = 'Games!e2e1';
const artifacts = fileURLToPath(new URL('./artifacts/', import.meta.url));
await mkdir(artifacts, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-quic',
  ],
});

const started = Date.now();
let checks = 0;
/** check records one passed assertion and prints it. */
function ok(message) {
  checks += 1;
  console.log(`ok ${checks} ${message}`);
}

const cents = new Intl.NumberFormat('en-US', {
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
  roundingMode: 'trunc',
});

/**
 * The player's own session for checks from outside the page: the page keeps
 * its tokens in memory (web/src/lib/tokens.ts), out of the test's reach.
 */
let checkToken = '';

/** signInForChecks opens that session through the API, as another device would. */
async function signInForChecks(username) {
  const csrf = await fetch(`${baseURL}/api/csrf`);
  const cookie = (csrf.headers.get('set-cookie') ?? '').split(';')[0];
  const { csrfToken } = await csrf.json();
  const res = await fetch(`${baseURL}/api/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Cookie: cookie, 'X-CSRF-Token': csrfToken },
    body: JSON.stringify({ username, password: PASSWORD, turnstileToken: 'XXXX.DUMMY.TOKEN.XXXX' }),
  });
  assert.equal(res.status, 200, 'sign-in for the balance checks');
  checkToken = (await res.json()).token;
}

/** serverBalance reads the balance the server holds (GET /api/auth/user). */
async function serverBalance() {
  const res = await fetch(`${baseURL}/api/auth/user`, { headers: { Authorization: `Bearer ${checkToken}` } });
  assert.equal(res.status, 200, 'GET /api/auth/user for the balance check');
  const body = await res.json();
  return body.user.balance;
}

/** expectHeaderBalance waits until the header shows the server's balance (truncated to cents). */
async function expectHeaderBalance(page, game) {
  const balance = await serverBalance();
  const want = `$${cents.format(balance)}`;
  const header = page.getByTestId('balance');
  const deadline = Date.now() + 5000;
  let shown = await header.textContent();
  while (shown !== want && Date.now() < deadline) {
    await page.waitForTimeout(100);
    shown = await header.textContent();
  }
  assert.equal(shown, want, `${game}: header balance`);
  ok(`${game}: header balance ${shown} equals GET /api/auth/user`);
  return balance;
}

async function snap(page, name) {
  await page.screenshot({ path: `${artifacts}${name}.png`, fullPage: true });
}

/** toast waits for a notification with exactly text. */
async function toast(page, text) {
  await page.getByRole('region', { name: 'Notifications' }).getByText(text, { exact: true }).waitFor();
}

/** firstOf waits until the first of the locators is visible. */
async function firstOf(...locators) {
  await Promise.any(locators.map((l) => l.waitFor({ timeout: 15000 })));
}

async function setBet(page, amount) {
  await page.getByLabel('Bet Amount').fill(String(amount));
}

async function register(page, username) {
  await page.goto('/');
  await page.getByRole('button', { name: 'Register' }).click();
  const dialog = page.getByRole('dialog', { name: 'Register' });
  await dialog.getByLabel('Username').fill(username);
  await dialog.getByLabel('Email').fill(`${username}@example.com`);
  await dialog.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await dialog.getByLabel('Confirm Password').fill(PASSWORD);
  await dialog.getByLabel('I am not a robot (development check)').check();
  await dialog.getByRole('button', { name: 'Register' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByText(username, { exact: true }).filter({ visible: true }).first().waitFor();
}

async function playDice(page) {
  await page.goto('/games/dice');
  await page.getByRole('heading', { level: 1, name: 'Dice' }).waitFor();
  await page.getByText('Place a bet and roll the dice to see your result.').waitFor();
  await setBet(page, 0);
  await page.getByRole('button', { name: 'Roll Dice' }).click();
  await toast(page, 'Please enter a valid bet amount');
  await setBet(page, 1e9);
  await page.getByRole('button', { name: 'Roll Dice' }).click();
  await toast(page, 'Insufficient balance');
  ok('dice: client validation messages');
  await setBet(page, 1);
  await page.getByRole('button', { name: '½' }).click();
  assert.equal(await page.getByLabel('Bet Amount').inputValue(), '0.5');
  await page.getByRole('button', { name: '2×' }).click();
  await page.getByRole('button', { name: 'Roll Dice' }).click();
  const results = page.getByRole('region', { name: 'Results' });
  await results.getByText(/^(WIN|LOSE)!$/).waitFor();
  const outcome = await results.getByText(/^(WIN|LOSE)!$/).textContent();
  ok(`dice: rolled ${await results.getByText(/^\d+\.\d\d$/).textContent()} → ${outcome}`);
  await expectHeaderBalance(page, 'dice');
  await snap(page, 'dice');
}

async function playMines(page) {
  await page.goto('/games/mines');
  await page.getByRole('heading', { level: 1, name: 'Mines' }).waitFor();
  const board = page.getByRole('group', { name: 'Mines board' });
  const cashOut = page.getByRole('button', { name: /^Cash Out/ });

  // Play until a gem is found, then reload mid-game.
  let resumedTile = null;
  for (let attempt = 0; attempt < 10 && !resumedTile; attempt++) {
    await page.getByRole('button', { name: 'Play' }).click();
    await cashOut.waitFor();
    const tile = board.getByRole('button', { name: 'Row 3, column 3, hidden' });
    await tile.click();
    const after = board.getByRole('button', { name: /^Row 3, column 3, (gem|mine)$/ });
    await after.waitFor();
    const label = await after.getAttribute('aria-label');
    if (label.endsWith('gem')) {
      resumedTile = label;
    } else {
      await page.getByText('Game Over', { exact: true }).waitFor();
      ok('mines: a mine ends the game with Game Over');
      await expectHeaderBalance(page, 'mines (lost)');
    }
  }
  assert.ok(resumedTile, 'mines: found a gem within 10 games');
  await page.reload();
  await board.getByRole('button', { name: resumedTile }).waitFor();
  await cashOut.waitFor();
  assert.match(await cashOut.textContent(), /^Cash Out \$\d+\.\d\d$/);
  ok(`mines: the running game resumed after a reload (${await cashOut.textContent()})`);
  await cashOut.click();
  await page.getByText('You Won!', { exact: true }).waitFor();
  ok('mines: cashed out, You Won!');
  await expectHeaderBalance(page, 'mines');
  await snap(page, 'mines');
}

async function playPlinko(page) {
  await page.goto('/games/plinko');
  await page.getByRole('heading', { level: 1, name: 'Plinko' }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Reset' }).isDisabled(), true);
  await setBet(page, 0.1);
  const drop = page.getByRole('button', { name: 'Drop Ball' });
  const rows = page.getByLabel('Rows');

  // Count animation frames while 20 balls fall.
  await page.evaluate(() => {
    window.__frames = [];
    window.__counting = true;
    const tick = (t) => {
      window.__frames.push(t);
      if (window.__counting) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  for (let i = 0; i < 20; i++) {
    await drop.click();
    await page.waitForTimeout(60);
  }
  const dropped = page.getByText('Balls Dropped').locator('xpath=..');
  await dropped.getByText('20', { exact: true }).waitFor();
  // The rows slider unlocks once every ball has landed.
  await page.waitForFunction(() => !document.querySelector('input[type=range]')?.disabled, null, { timeout: 15000 });
  assert.equal(await rows.isDisabled(), false);
  const frames = await page.evaluate(() => {
    window.__counting = false;
    return window.__frames;
  });
  const intervals = frames.slice(1).map((t, i) => t - frames[i]);
  const elapsed = frames.at(-1) - frames[0];
  const expected = Math.round(elapsed / (1000 / 60));
  const missed = intervals.reduce((n, d) => n + Math.max(0, Math.round(d / (1000 / 60)) - 1), 0);
  const worst = Math.max(...intervals);
  console.log(
    `   plinko frames: ${frames.length} callbacks in ${elapsed.toFixed(0)} ms (≈${expected} at 60 fps), ` +
      `${missed} dropped, longest frame ${worst.toFixed(1)} ms, ${((frames.length / elapsed) * 1000).toFixed(1)} fps`,
  );
  ok('plinko: 20 balls dropped and landed');
  // Last Win shows a ball's win when it lands (the result keeps its suspense while it falls).
  assert.match(await page.getByText('Last Win').locator('xpath=..').textContent(), /Last Win\$\d+\.\d\d$/);
  ok('plinko: Last Win shows the last landed ball');
  await expectHeaderBalance(page, 'plinko');
  await snap(page, 'plinko');
  await page.getByRole('button', { name: 'Reset' }).click();
  await dropped.getByText('0', { exact: true }).waitFor();
  ok('plinko: Reset clears the totals');
}

async function playPump(page) {
  await page.goto('/games/pump');
  await page.getByRole('heading', { level: 1, name: 'Pump' }).waitFor();
  await page.getByText('Place your bet and start pumping').waitFor();
  assert.equal(await page.getByLabel('Difficulty').inputValue(), 'medium');
  await page.getByLabel('Difficulty').selectOption('easy');
  await page.getByRole('button', { name: 'Start Game' }).click();
  const pump = page.getByRole('button', { name: 'Pump', exact: true });
  await pump.waitFor();
  assert.equal(await page.getByLabel('Difficulty').isDisabled(), true);
  await page.getByText(/^Potential win: \$/).waitFor();
  const pumps = page.getByText('Pumps', { exact: true }).locator('xpath=..');
  let burst = false;
  for (let i = 0; i < 3 && !burst; i++) {
    await pump.click();
    await firstOf(pumps.getByText(String(i + 1), { exact: true }), page.getByText('Balloon Burst!'));
    burst = await page.getByText('Balloon Burst!').isVisible();
  }
  if (burst) {
    ok('pump: Balloon Burst!');
  } else {
    await page.getByRole('button', { name: 'Cash Out' }).click();
    await page.getByText(/^Success! You won \$\d/).waitFor();
    ok(`pump: ${await page.getByText(/^Success! You won/).textContent()}`);
  }
  await expectHeaderBalance(page, 'pump');
  await snap(page, 'pump');
}

async function playKeno(page) {
  await page.goto('/games/keno');
  await page.getByRole('heading', { level: 1, name: 'Keno' }).waitFor();
  await page.getByRole('button', { name: 'Draw Numbers' }).click();
  await toast(page, 'Please select at least one number');
  ok('keno: Please select at least one number');
  const board = page.getByRole('group', { name: 'Keno numbers' });
  for (const n of [3, 11, 19, 27, 35]) await board.getByRole('button', { name: String(n), exact: true }).click();
  await page.getByText('5/10').waitFor();
  await page.getByRole('button', { name: 'Draw Numbers' }).click();
  await page.getByText(/^(Win: \$[\d,.]+|No win)$/).waitFor({ timeout: 10000 });
  ok(`keno: ${await page.getByText(/^(Win: \$[\d,.]+|No win)$/).textContent()}`);
  await expectHeaderBalance(page, 'keno');
  await page.getByRole('button', { name: 'Play Again' }).click();
  await page.getByText(/^(Win: \$[\d,.]+|No win)$/).waitFor({ timeout: 10000 });
  ok('keno: Play Again with the same numbers');
  await page.getByRole('button', { name: 'Edit' }).click();
  await page.getByRole('button', { name: 'Play With Selected Numbers' }).waitFor();
  await page.getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('button', { name: 'Reset' }).waitFor();
  await expectHeaderBalance(page, 'keno');
  await snap(page, 'keno');
}

async function playBlackjack(page) {
  await page.goto('/games/blackjack');
  await page.getByRole('heading', { level: 1, name: 'Blackjack' }).waitFor();
  await page.getByText('Place your bet and deal to start the game').waitFor();
  await page.getByRole('button', { name: 'Deal' }).click();
  const banner = page.getByText(/(You win|Push|Dealer wins)/);
  const hit = page.getByRole('button', { name: /^Hit/ });
  await firstOf(banner.first(), page.locator('button[aria-keyshortcuts="H"]:not([disabled])'));
  if (!(await banner.first().isVisible())) {
    await page.keyboard.press('s');
    ok('blackjack: stood with the S shortcut');
  } else {
    ok('blackjack: the deal ended the game (a natural)');
  }
  await banner.first().waitFor({ timeout: 10000 });
  const result = await banner.first().textContent();
  ok(`blackjack: ${result}`);
  assert.equal(await hit.count(), 0);
  await expectHeaderBalance(page, 'blackjack');
  await snap(page, 'blackjack');
  await page.getByRole('button', { name: 'New Game' }).click();
  await page.getByText('Place your bet and deal to start the game').waitFor();
}

async function verifyInFairnessPanel(page) {
  await page.getByRole('button', { name: 'Fairness' }).click();
  const dialog = page.getByRole('dialog', { name: 'Fairness' });
  await dialog.getByText('Active server seed (SHA-256)').waitFor();
  await dialog.getByRole('button', { name: 'Rotate Seed Pair' }).click();
  await dialog.getByText('Previous seed pair revealed').waitFor();
  ok('fairness: rotation reveals the server seed');
  await dialog.getByRole('tab', { name: 'My Bets' }).click();
  const list = dialog.getByRole('list', { name: 'My Bets' });
  await list.getByRole('button').first().click();
  await dialog.getByText('✓ Verified in your browser: the result matches the record').waitFor({ timeout: 10000 });
  await dialog.getByText('The server recomputes the same result').waitFor();
  ok('fairness: the latest bet verifies in the browser and on the server');
  await snap(page, 'fairness');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
}

async function narrowScreens(page) {
  await page.setViewportSize({ width: 360, height: 740 });
  for (const slug of ['dice', 'mines', 'plinko', 'pump', 'keno', 'blackjack']) {
    await page.goto(`/games/${slug}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await page.waitForTimeout(150);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 360, `${slug} overflows at 360 px (${width})`);
    await snap(page, `${slug}-360`);
  }
  ok('every game fits a 360 px screen');
}

try {
  const context = await browser.newContext({ baseURL, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  // Content-Security-Policy violations count as page errors.
  await watchCSP(context, page, errors);
  const username = `games_${Date.now().toString(36)}`.slice(0, 20);
  await register(page, username);
  await signInForChecks(username);
  ok(`registered ${username}`);

  await playDice(page);
  await playMines(page);
  await playPlinko(page);
  await playPump(page);
  await playKeno(page);
  await playBlackjack(page);
  await verifyInFairnessPanel(page);
  await narrowScreens(page);

  assert.deepEqual(errors, [], 'page errors');
  await context.close();
  console.log(`${checks} checks passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (process.env.E2E_RESULTS) {
    // One test for the whole script (it stops at the first failed check), as make test counts it.
    await writeFile(process.env.E2E_RESULTS, JSON.stringify({ numPassedTests: 1, numFailedTests: 0, checks }));
  }
} finally {
  await browser.close();
}
