// The player's view at phone, tablet and desktop widths (issue 16):
//  - layout: for each game at 360×780, 768×1024 and 1280×800, a signed-in
//    player plays one action and, once the result shows, nothing is wider than
//    the viewport (outside deliberate scroll boxes), the board and the result
//    lie inside the first screen with the page unscrolled, and on a phone the
//    header takes at most 64 px. Screenshots of that first screen go to
//    test/artifacts/e2e/layout-<game>-<width>.png.
//  - suspense: the header balance read right after a response is the balance
//    before the bet minus the stake, never the settled balance, until the
//    animation shows the result (Plinko, Keno, Dice, Blackjack).
//  - accessibility: axe-core over every screen (home, the dialogs, the six
//    games after a bet, settings, admin, My Bets, not found, the account
//    menu) at 360 and 1280 px with no serious or critical violation; the
//    summary is printed as a table and written to .data/test/axe-summary.json.
// Environment: as harness.mjs, plus E2E_ADMIN_USER and E2E_ADMIN_PASSWORD (set by hack/e2e.sh).
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { baseURL, browser, newPage, registerUser, run, signIn, test } from './harness.mjs';

const PASSWORD = 'Passw0rd!';
const GAMES = ['dice', 'mines', 'plinko', 'pump', 'keno', 'blackjack'];
const VIEWPORTS = [
  { width: 360, height: 780 },
  { width: 768, height: 1024 },
  { width: 1280, height: 800 },
];
const HEADER_MAX_PX = 64;
const require = createRequire(import.meta.url);
const axePath = require.resolve('axe-core/axe.min.js');
const axeVersion = require('axe-core/package.json').version;
const root = fileURLToPath(new URL('../../', import.meta.url));
// Screenshots sit next to the other scripts' folders: test/artifacts/e2e/layout-<game>-<width>.png.
const artifacts = process.env.E2E_SCREENSHOTS ? dirname(process.env.E2E_SCREENSHOTS) : null;
const axeSummaryFile = `${process.env.E2E_RESULTS ? dirname(process.env.E2E_RESULTS) : `${root}.data/test`}/axe-summary.json`;

const cents = new Intl.NumberFormat('en-US', {
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
  roundingMode: 'trunc',
});
const money = (n) => `$${cents.format(n)}`;

/** screenshot saves the first screen (what a player sees without scrolling). */
async function screenshot(page, name) {
  if (!artifacts) return;
  await mkdir(artifacts, { recursive: true });
  await page.screenshot({ path: `${artifacts}/${name}.png` });
}

/** player registers a fresh player through the API. */
async function player(prefix) {
  const username = `${prefix}_${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`.slice(0, 20);
  await registerUser(username, PASSWORD);
  return username;
}

/** signedInPage opens a page at viewport with username signed in. */
async function signedInPage(viewport, username, options) {
  const session = options ? await bareContext(viewport, options) : await newPage(viewport);
  await session.page.goto('/');
  await signIn(session.page, username, PASSWORD);
  return session;
}

/** bareContext is a context without the CSP watch (for axe, see axeScan). */
async function bareContext(viewport, options) {
  const context = await browser.newContext({ baseURL, viewport, ...options });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  return { context, page, errors };
}

async function openGame(page, slug) {
  await page.goto(`/games/${slug}`);
  await page.getByRole('heading', { level: 1 }).waitFor();
  await page.getByTestId('game-board').waitFor();
  await page.getByRole('button', { name: '½' }).waitFor();
  // Fonts and lazy chunks settle; the page starts unscrolled.
  await page.evaluate(() => window.scrollTo(0, 0));
}

const resultText = /^(Win: \$[\d,.]+|No win)$/;

/**
 * ACTIONS play one bet of each game the way a player taps it, and return the
 * locator of the result on screen once it shows.
 */
const ACTIONS = {
  async dice(page) {
    await page.getByRole('button', { name: 'Roll Dice' }).click();
    const outcome = page.getByText(/^(WIN|LOSE)!$/);
    await outcome.waitFor();
    return outcome;
  },
  async mines(page) {
    await page.getByRole('button', { name: 'Play' }).click();
    await page.getByRole('button', { name: /^Cash Out/ }).waitFor();
    await page.getByRole('button', { name: 'Row 3, column 3, hidden' }).click();
    const tile = page.getByRole('button', { name: /^Row 3, column 3, (gem|mine)$/ });
    await tile.waitFor();
    return tile;
  },
  async plinko(page) {
    // Setting the rows scrolls down to the slider; the drop starts from the top of the page.
    await page.getByLabel('Rows').fill('16');
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.getByRole('button', { name: 'Drop Ball' }).click();
    const landed = page.getByRole('list', { name: 'Payouts' }).locator('[aria-current="true"]');
    await landed.waitFor({ timeout: 10000 });
    return landed;
  },
  async pump(page) {
    await page.getByRole('button', { name: 'Start Game' }).click();
    await page.getByRole('button', { name: 'Pump', exact: true }).click();
    const message = page.getByText(/^(Balloon Burst!|Potential win:)/);
    await message.first().waitFor();
    return message.first();
  },
  async keno(page) {
    const board = page.getByRole('group', { name: 'Keno numbers' });
    for (const n of [3, 11, 19, 27, 35]) await board.getByRole('button', { name: String(n), exact: true }).click();
    await page.getByRole('button', { name: 'Draw Numbers' }).click();
    const result = page.getByText(resultText);
    await result.waitFor({ timeout: 10000 });
    return result;
  },
  async blackjack(page) {
    await page.getByRole('button', { name: 'Deal' }).click();
    const banner = page.getByTestId('game-board').locator('[aria-live] strong');
    const stand = page.getByRole('button', { name: /^Stand/ });
    await Promise.any([
      banner.waitFor({ timeout: 10000 }),
      stand.and(page.locator(':enabled')).waitFor({ timeout: 10000 }),
    ]);
    if (!(await banner.isVisible())) await stand.click();
    await banner.waitFor({ timeout: 10000 });
    return banner;
  },
};

/**
 * overflow lists what sticks out of the viewport sideways: the page's scroll
 * width and every visible element whose box passes the right (or left) edge,
 * unless an ancestor clips or scrolls it (Keno's payout table, the admin
 * table: deliberate scroll boxes).
 */
function overflow(page) {
  return page.evaluate(() => {
    const width = window.innerWidth;
    const offenders = [];
    for (const el of document.body.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (r.width < 2 || r.height < 2) continue;
      if (r.right <= width + 0.5 && r.left >= -0.5) continue;
      let clipped = false;
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
        if (getComputedStyle(p).overflowX !== 'visible') {
          clipped = true;
          break;
        }
      }
      if (clipped) continue;
      const id =
        el.getAttribute('data-testid') ?? el.getAttribute('aria-label') ?? el.className?.baseVal ?? el.className;
      offenders.push(`<${el.tagName.toLowerCase()} ${id}> ${r.left.toFixed(0)}..${r.right.toFixed(0)}`);
    }
    return { scrollWidth: document.scrollingElement.scrollWidth, width, offenders };
  });
}

/** inFirstScreen asserts that locator's box lies inside the viewport. */
async function inFirstScreen(page, locator, what) {
  const box = await locator.boundingBox();
  const { width, height } = page.viewportSize();
  assert.ok(box, `${what}: not on screen`);
  const fits = box.x >= -0.5 && box.y >= -0.5 && box.x + box.width <= width + 0.5 && box.y + box.height <= height + 0.5;
  assert.ok(fits, `${what}: box ${JSON.stringify(box)} outside the first screen ${width}×${height}`);
  return box;
}

const layoutFigures = [];
for (const viewport of VIEWPORTS) {
  test(`every game at ${viewport.width}×${viewport.height}: board and result on the first screen, nothing overflows`, async () => {
    const username = await player(`lay${viewport.width}`);
    const { context, page, errors } = await signedInPage(viewport, username);
    try {
      for (const game of GAMES) {
        await openGame(page, game);
        const result = await ACTIONS[game](page);
        await page.waitForTimeout(400); // the landing animations settle
        const scrollY = await page.evaluate(() => window.scrollY);
        assert.equal(scrollY, 0, `${game} at ${viewport.width}: the action scrolled the page to ${scrollY}`);
        const board = await inFirstScreen(page, page.getByTestId('game-board'), `${game} board at ${viewport.width}`);
        await inFirstScreen(page, result, `${game} result at ${viewport.width}`);
        const o = await overflow(page);
        assert.ok(
          o.scrollWidth <= o.width,
          `${game} at ${viewport.width}: page scrolls sideways (${o.scrollWidth} > ${o.width})`,
        );
        assert.deepEqual(o.offenders, [], `${game} at ${viewport.width}: elements past the edge`);
        const header = await page.getByRole('banner').boundingBox();
        if (viewport.width <= 400) {
          assert.ok(
            header.height <= HEADER_MAX_PX,
            `header ${header.height} px high at ${viewport.width} (at most ${HEADER_MAX_PX})`,
          );
        }
        layoutFigures.push({
          game,
          width: viewport.width,
          header: Math.round(header.height),
          boardBottom: Math.round(board.y + board.height),
          height: viewport.height,
        });
        await screenshot(page, `layout-${game}-${viewport.width}`);
      }
      assert.deepEqual(errors, [], 'page errors and CSP violations');
    } finally {
      await context.close();
    }
  });
}

test('the admin user table and the settings fit or scroll in their own box at 360 px', async () => {
  const admin = process.env.E2E_ADMIN_USER;
  assert.ok(admin, 'E2E_ADMIN_USER is required');
  const { context, page, errors } = await newPage({ width: 360, height: 780 });
  try {
    await page.goto('/');
    await signIn(page, admin, process.env.E2E_ADMIN_PASSWORD);
    for (const path of ['/admin', '/settings', '/bets']) {
      await page.goto(path);
      await page.getByRole('heading', { level: 1 }).waitFor();
      if (path === '/admin') await page.getByRole('table').first().waitFor();
      await page.waitForTimeout(200);
      const o = await overflow(page);
      assert.ok(o.scrollWidth <= o.width, `${path}: page scrolls sideways (${o.scrollWidth} > ${o.width})`);
      assert.deepEqual(o.offenders, [], `${path}: elements past the edge`);
      await screenshot(page, `layout${path.replace('/', '-')}-360`);
    }
    assert.deepEqual(errors, [], 'page errors and CSP violations');
  } finally {
    await context.close();
  }
});

test('layout figures', async () => {
  console.log('   game       width  header  board bottom / screen');
  for (const f of layoutFigures) {
    console.log(
      `   ${f.game.padEnd(10)} ${String(f.width).padStart(5)}  ${String(f.header).padStart(4)} px  ${f.boardBottom} / ${f.height}`,
    );
  }
  assert.equal(layoutFigures.length, GAMES.length * VIEWPORTS.length);
});

/**
 * headerBalance reads the header right after a game's response arrives (the
 * response event fires before the page has run a line of the game's code).
 */
async function balanceAfterResponse(page, path, act) {
  const header = page.getByTestId('balance');
  const before = await header.textContent();
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith(path) && r.request().method() === 'POST'),
    act(),
  ]);
  const body = await response.json();
  // The first change the header shows after the response.
  let shown = await header.textContent();
  for (let i = 0; i < 20 && shown === before; i++) {
    await page.waitForTimeout(25);
    shown = await header.textContent();
  }
  return { before, body, shown };
}

test('suspense: the header balance waits for the animation (Plinko, Keno, Dice, Blackjack)', async () => {
  const username = await player('suspense');
  const { context, page, errors } = await signedInPage({ width: 1280, height: 800 }, username);
  const header = page.getByTestId('balance');
  try {
    // Plinko, 16 rows: 18 path points at 150 ms, 2.6 s in the air.
    await openGame(page, 'plinko');
    await page.getByLabel('Rows').fill('16');
    const p = await balanceAfterResponse(page, '/api/games/plinko', () =>
      page.getByRole('button', { name: 'Drop Ball' }).click(),
    );
    const balanceBefore = Number(p.before.replace(/[$,]/g, ''));
    assert.equal(
      p.shown,
      money(balanceBefore - 1),
      'plinko: right after the response the header shows only the stake gone',
    );
    assert.ok(p.body.winAmount > 0, 'plinko multipliers are never 0');
    assert.notEqual(p.shown, money(p.body.newBalance), 'plinko: the settled balance is not shown while the ball falls');
    await header.filter({ hasText: money(p.body.newBalance) }).waitFor({ timeout: 6000 });
    console.log(`   plinko: ${p.before} → ${p.shown} in flight → ${money(p.body.newBalance)} on landing`);

    // Keno: 10 numbers flip, 300 ms each with an 80 ms stagger.
    await openGame(page, 'keno');
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) {
      await page
        .getByRole('group', { name: 'Keno numbers' })
        .getByRole('button', { name: String(n), exact: true })
        .click();
    }
    const k = await balanceAfterResponse(page, '/api/games/keno', () =>
      page.getByRole('button', { name: 'Draw Numbers' }).click(),
    );
    const kenoBefore = Number(k.before.replace(/[$,]/g, ''));
    assert.equal(k.shown, money(kenoBefore - 1), 'keno: right after the response the header shows only the stake gone');
    if (k.body.winAmount > 0) assert.notEqual(k.shown, money(k.body.newBalance), 'keno: no win before the last flip');
    assert.equal(await page.getByText(resultText).count(), 0, 'keno: no result before the last flip');
    await page.getByText(resultText).waitFor({ timeout: 10000 });
    assert.equal(await header.textContent(), money(k.body.newBalance), 'keno: the balance after the last flip');
    console.log(
      `   keno: ${k.before} → ${k.shown} while flipping → ${money(k.body.newBalance)} (win ${k.body.winAmount})`,
    );

    // Dice: the marker slides for 450 ms before the result shows.
    await openGame(page, 'dice');
    await page.getByLabel('Roll Under').fill('98');
    const d = await balanceAfterResponse(page, '/api/games/dice', () =>
      page.getByRole('button', { name: 'Roll Dice' }).click(),
    );
    const diceBefore = Number(d.before.replace(/[$,]/g, ''));
    assert.equal(d.shown, money(diceBefore - 1), 'dice: right after the response the header shows only the stake gone');
    await page.getByText(/^(WIN|LOSE)!$/).waitFor();
    assert.equal(await header.textContent(), money(d.body.newBalance), 'dice: the balance once the roll lands');
    console.log(`   dice: ${d.before} → ${d.shown} while rolling → ${money(d.body.newBalance)}`);

    // Blackjack: stand, and the balance waits for the dealer's cards.
    await openGame(page, 'blackjack');
    for (let hand = 0; hand < 5; hand++) {
      await page.getByRole('button', { name: 'Deal' }).click();
      const stand = page.getByRole('button', { name: /^Stand/ }).and(page.locator(':enabled'));
      const banner = page.getByTestId('game-board').locator('[aria-live] strong');
      await Promise.any([banner.waitFor({ timeout: 10000 }), stand.waitFor({ timeout: 10000 })]);
      if (await banner.isVisible()) {
        // A natural: the deal settled the game; play another hand.
        await page.getByRole('button', { name: 'New Game' }).click();
        continue;
      }
      const b = await balanceAfterResponse(page, '/api/games/blackjack/stand', () => stand.click());
      if (b.body.winAmount > 0) {
        assert.equal(b.shown, b.before, 'blackjack: the balance stays during the dealer reveal');
      }
      assert.equal(await banner.count(), 0, 'blackjack: no result before the dealer reveal');
      await banner.waitFor({ timeout: 10000 });
      assert.equal(
        await header.textContent(),
        money(b.body.newBalance),
        'blackjack: the balance after the dealer reveal',
      );
      console.log(
        `   blackjack: ${b.before} during the dealer reveal → ${money(b.body.newBalance)} (${b.body.result})`,
      );
      break;
    }
    assert.deepEqual(errors, [], 'page errors and CSP violations');
  } finally {
    await context.close();
  }
});

/**
 * axeScan runs axe-core on the page as it is. addScriptTag puts axe inline,
 * which the app's Content-Security-Policy forbids (script-src 'self'), so the
 * axe contexts bypass the CSP; every other test here keeps it and fails on
 * any violation.
 */
async function axeScan(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: axePath });
  return page.evaluate(async () => {
    const res = await window.axe.run(document, { resultTypes: ['violations'] });
    return res.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5),
    }));
  });
}

const axeResults = [];
async function scan(page, screen, width) {
  // Dialogs and menus fade in: axe would measure the contrast of half-transparent text.
  await page.waitForTimeout(350);
  const violations = await axeScan(page);
  axeResults.push({ screen, width, violations });
}

for (const width of [360, 1280]) {
  test(`axe at ${width} px: every screen without a serious or critical violation`, async () => {
    const viewport = { width, height: width === 360 ? 780 : 800 };
    const guest = await bareContext(viewport, { bypassCSP: true });
    try {
      const page = guest.page;
      await page.goto('/');
      await page.getByRole('heading', { level: 1 }).waitFor();
      await scan(page, 'home (guest)', width);
      await page.getByRole('button', { name: 'Sign In' }).click();
      await page.getByRole('dialog', { name: 'Sign In' }).getByLabel('Password').waitFor();
      await scan(page, 'sign-in dialog', width);
      await page.keyboard.press('Escape');
      await page.getByRole('button', { name: 'Register' }).click();
      await page.getByRole('dialog', { name: 'Register' }).getByLabel('Confirm Password').waitFor();
      await scan(page, 'register dialog', width);
      await page.keyboard.press('Escape');
      await page.goto('/games/plinko');
      await page.getByRole('heading', { level: 1 }).waitFor();
      await scan(page, 'plinko (guest)', width);
      await page.goto('/no-such-page');
      await page.getByRole('heading', { level: 1 }).waitFor();
      await scan(page, 'not found', width);
    } finally {
      await guest.context.close();
    }

    const username = await player(`axe${width}`);
    const { context, page } = await signedInPage(viewport, username, { bypassCSP: true });
    try {
      for (const game of GAMES) {
        await openGame(page, game);
        await scan(page, `${game} (before a bet)`, width);
        await ACTIONS[game](page);
        await page.waitForTimeout(400);
        await scan(page, `${game} (after a bet)`, width);
      }
      await page.getByRole('button', { name: 'Fairness' }).click();
      await page.getByRole('dialog', { name: 'Fairness' }).getByText('Active server seed (SHA-256)').waitFor();
      await scan(page, 'fairness dialog', width);
      await page.keyboard.press('Escape');
      if (width < 1024) {
        await page.getByRole('button', { name: /account menu$/ }).click();
        await page.getByRole('menu').waitFor();
        await scan(page, 'account menu', width);
        await page.keyboard.press('Escape');
      }
      for (const path of ['/settings', '/bets']) {
        await page.goto(path);
        await page.getByRole('heading', { level: 1 }).waitFor();
        await page.waitForTimeout(300);
        await scan(page, path, width);
      }
    } finally {
      await context.close();
    }

    const admin = await signedInPageAs(viewport, process.env.E2E_ADMIN_USER, process.env.E2E_ADMIN_PASSWORD);
    try {
      await admin.page.goto('/admin');
      await admin.page.getByRole('heading', { level: 1 }).waitFor();
      await admin.page.getByRole('table').first().waitFor();
      await scan(admin.page, '/admin', width);
      await admin.page.getByRole('button', { name: 'Manage' }).first().click();
      await admin.page.getByRole('dialog').waitFor();
      await scan(admin.page, 'manage user dialog', width);
    } finally {
      await admin.context.close();
    }

    const bad = axeResults
      .filter((r) => r.width === width)
      .flatMap((r) =>
        r.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => ({ screen: r.screen, ...v })),
      );
    assert.deepEqual(bad, [], `serious or critical axe violations at ${width} px`);
  });
}

async function signedInPageAs(viewport, username, password) {
  assert.ok(username && password, 'E2E_ADMIN_USER and E2E_ADMIN_PASSWORD are required');
  const session = await bareContext(viewport, { bypassCSP: true });
  await session.page.goto('/');
  await signIn(session.page, username, password);
  return session;
}

test('axe summary', async () => {
  const impacts = ['critical', 'serious', 'moderate', 'minor'];
  const rows = axeResults.map((r) => {
    const counts = Object.fromEntries(impacts.map((i) => [i, r.violations.filter((v) => v.impact === i).length]));
    return { screen: r.screen, width: r.width, ...counts, rules: [...new Set(r.violations.map((v) => v.id))] };
  });
  console.log(`   ${'screen'.padEnd(26)} width  critical serious moderate minor  rules`);
  for (const r of rows) {
    console.log(
      `   ${r.screen.padEnd(26)} ${String(r.width).padStart(5)}  ${String(r.critical).padStart(8)} ${String(r.serious).padStart(7)} ${String(r.moderate).padStart(8)} ${String(r.minor).padStart(5)}  ${r.rules.join(', ')}`,
    );
  }
  await mkdir(dirname(axeSummaryFile), { recursive: true });
  await writeFile(axeSummaryFile, JSON.stringify({ axeVersion, screens: rows, details: axeResults }, null, 2));
  console.log(`   written to ${axeSummaryFile}`);
  assert.ok(rows.length > 0);
});

await run('layout');
