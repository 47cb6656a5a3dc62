// The player's view at phone, tablet and desktop widths (issue 16):
//  - layout: for each game at 360×780, 768×1024 and 1280×800, a signed-in
//    player plays one action and, once the result shows, nothing is wider than
//    the viewport (outside deliberate scroll boxes), the board and the result
//    lie inside the first screen with the page unscrolled, and on a phone the
//    header takes at most 64 px. Screenshots of that first screen go to
//    test/artifacts/e2e/layout/layout-<game>-<width>.png.
//  - suspense: the header balance's first change after a response is the
//    balance before the bet minus the stake, never the settled balance, until
//    the animation shows the result (Plinko, Keno, Dice, Blackjack).
//  - accessibility: axe-core over every screen (home, the dialogs, the six
//    games after a bet, settings, admin, My Bets, not found, the account
//    menu) at 360 and 1280 px with no serious or critical violation; the
//    summary is printed as a table and written to .data/test/axe-summary.json.
// The tests run in order in one worker: the last ones print what the first measured.
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, figure, registerUser, signIn, test, uniqueName, type Page } from './fixtures';
import type { Locator } from '@playwright/test';

test.describe.configure({ mode: 'serial' });

const PASSWORD = 'Passw0rd!';
const GAMES = ['dice', 'mines', 'plinko', 'pump', 'keno', 'blackjack'] as const;
type Game = (typeof GAMES)[number];
const VIEWPORTS = [
  { width: 360, height: 780 },
  { width: 768, height: 1024 },
  { width: 1280, height: 800 },
];
const HEADER_MAX_PX = 64;
const require = createRequire(import.meta.url);
const axePath = require.resolve('axe-core/axe.min.js');
const axeVersion = (require('axe-core/package.json') as { version: string }).version;
const root = fileURLToPath(new URL('../../', import.meta.url));
const axeSummaryFile = `${root}.data/test/axe-summary.json`;

const cents = new Intl.NumberFormat('en-US', {
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
  roundingMode: 'trunc',
});
const money = (n: number) => `$${cents.format(n)}`;

/** player registers a fresh player through the API. */
async function player(prefix: string) {
  return (await registerUser(uniqueName(prefix), PASSWORD)).username;
}

/**
 * settled waits until every finite animation of the page (CSS transitions and
 * animations, Web Animations: the landing animations, dialogs and menus
 * fading in) has finished, then for two frames.
 */
async function settled(page: Page) {
  await page.evaluate(async () => {
    const finite = () =>
      document
        .getAnimations()
        .filter((a) => a.playState !== 'finished' && a.effect?.getComputedTiming().iterations !== Infinity);
    for (let running = finite(); running.length > 0; running = finite()) {
      await Promise.all(running.map((a) => a.finished.catch(() => undefined)));
    }
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  });
}

async function openGame(page: Page, slug: string) {
  await page.goto(`/games/${slug}`);
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  await expect(page.getByTestId('game-board')).toBeVisible();
  await expect(page.getByRole('button', { name: '½' })).toBeVisible();
  // The page starts unscrolled.
  await page.evaluate(() => {
    window.scrollTo(0, 0);
  });
}

const resultText = /^(Win: \$[\d,.]+|No win)$/;

/**
 * tap clicks a button the way a player taps it: once it is enabled, where it
 * is. Playwright retries a click on a disabled button (a Blackjack answer
 * while the cards are still being dealt), and each retry scrolls the target
 * first, by turns to the viewport's end, centre and start: the page would end
 * up scrolled by the test, not by the game.
 */
async function tap(locator: Locator) {
  await expect(locator).toBeEnabled();
  await locator.click();
}

/**
 * ACTIONS play one bet of each game the way a player taps it, and return the
 * locator of the result on screen once it shows.
 */
const ACTIONS: Record<Game, (page: Page) => Promise<Locator>> = {
  async dice(page) {
    await tap(page.getByRole('button', { name: 'Roll Dice' }));
    const outcome = page.getByText(/^(WIN|LOSE)!$/);
    await expect(outcome).toBeVisible();
    return outcome;
  },
  async mines(page) {
    await tap(page.getByRole('button', { name: 'Play' }));
    await expect(page.getByRole('button', { name: /^Cash Out/ })).toBeVisible();
    await tap(page.getByRole('button', { name: 'Row 3, column 3, hidden' }));
    const tile = page.getByRole('button', { name: /^Row 3, column 3, (gem|mine)$/ });
    await expect(tile).toBeVisible();
    return tile;
  },
  async plinko(page) {
    // Setting the rows scrolls down to the slider; the drop starts from the top of the page.
    await page.getByLabel('Rows').fill('16');
    await page.evaluate(() => {
      window.scrollTo(0, 0);
    });
    await tap(page.getByRole('button', { name: 'Drop Ball' }));
    const landed = page.getByRole('list', { name: 'Payouts' }).locator('[aria-current="true"]');
    await expect(landed).toBeVisible();
    return landed;
  },
  async pump(page) {
    await tap(page.getByRole('button', { name: 'Start Game' }));
    await tap(page.getByRole('button', { name: 'Pump', exact: true }));
    const message = page.getByText(/^(Balloon Burst!|Potential win:)/).first();
    await expect(message).toBeVisible();
    return message;
  },
  async keno(page) {
    const board = page.getByRole('group', { name: 'Keno numbers' });
    for (const n of [3, 11, 19, 27, 35]) await tap(board.getByRole('button', { name: String(n), exact: true }));
    await tap(page.getByRole('button', { name: 'Draw Numbers' }));
    const result = page.getByText(resultText);
    await expect(result).toBeVisible();
    return result;
  },
  async blackjack(page) {
    await tap(page.getByRole('button', { name: 'Deal' }));
    const banner = page.getByTestId('game-board').locator('[aria-live] strong');
    const stand = page.getByRole('button', { name: /^Stand/ });
    await declineInsurance(page, banner.or(stand.and(page.locator(':enabled'))));
    if (!(await banner.isVisible())) await tap(stand);
    await expect(banner).toBeVisible();
    return banner;
  },
};

/**
 * declineInsurance waits until the Blackjack deal shows next (the result, or the hand to play), answering an
 * insurance (or even money) offer first when the dealer shows an ace: Decline, then wait again.
 */
async function declineInsurance(page: Page, next: Locator) {
  const decline = page.getByRole('button', { name: /^Decline/ });
  await expect(next.or(decline).first()).toBeVisible();
  if (await decline.isVisible()) {
    // Offered with the deal, answerable once its cards are shown.
    await tap(decline);
    await expect(next.first()).toBeVisible();
  }
}

/**
 * overflow lists what sticks out of the viewport sideways: the page's scroll
 * width and every visible element whose box passes the right (or left) edge,
 * unless an ancestor clips or scrolls it (Keno's payout table, the admin
 * table: deliberate scroll boxes).
 */
function overflow(page: Page) {
  return page.evaluate(() => {
    const width = window.innerWidth;
    const offenders: string[] = [];
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
      const id = el.getAttribute('data-testid') ?? el.getAttribute('aria-label') ?? el.getAttribute('class');
      offenders.push(`<${el.tagName.toLowerCase()} ${id}> ${r.left.toFixed(0)}..${r.right.toFixed(0)}`);
    }
    const scrollWidth = document.scrollingElement?.scrollWidth ?? 0;
    return { sideways: scrollWidth > width ? `${scrollWidth} > ${width}` : null, offenders };
  });
}

/** inFirstScreen asserts that locator's box lies inside the viewport. */
async function inFirstScreen(page: Page, locator: Locator, what: string) {
  const box = await locator.boundingBox();
  const size = page.viewportSize();
  expect(box, `${what}: not on screen`).not.toBeNull();
  expect(size).not.toBeNull();
  if (!box || !size) throw new Error(`${what}: not on screen`);
  const { width, height } = size;
  const fits = box.x >= -0.5 && box.y >= -0.5 && box.x + box.width <= width + 0.5 && box.y + box.height <= height + 0.5;
  expect(fits, `${what}: box ${JSON.stringify(box)} outside the first screen ${width}×${height}`).toBe(true);
  return box;
}

const layoutFigures: { game: string; width: number; header: number; boardBottom: number; height: number }[] = [];
for (const viewport of VIEWPORTS) {
  test(`every game at ${viewport.width}×${viewport.height}: board and result on the first screen, nothing overflows`, async ({
    newSession,
    snap,
  }) => {
    const username = await player(`lay${viewport.width}`);
    const { page } = await newSession({ viewport });
    await page.goto('/');
    await signIn(page, username, PASSWORD);
    for (const game of GAMES) {
      await openGame(page, game);
      const result = await ACTIONS[game](page);
      await settled(page); // the landing animations settle
      const scrollY = await page.evaluate(() => window.scrollY);
      expect(scrollY, `${game} at ${viewport.width}: the action scrolled the page to ${scrollY}`).toBe(0);
      const board = await inFirstScreen(page, page.getByTestId('game-board'), `${game} board at ${viewport.width}`);
      await inFirstScreen(page, result, `${game} result at ${viewport.width}`);
      const o = await overflow(page);
      expect(o.sideways, `${game} at ${viewport.width}: page scrolls sideways`).toBeNull();
      expect(o.offenders, `${game} at ${viewport.width}: elements past the edge`).toEqual([]);
      const header = await page.getByRole('banner').boundingBox();
      if (!header) throw new Error('no header');
      if (viewport.width <= 400) {
        expect(
          header.height,
          `header ${header.height} px high at ${viewport.width} (at most ${HEADER_MAX_PX})`,
        ).toBeLessThanOrEqual(HEADER_MAX_PX);
      }
      layoutFigures.push({
        game,
        width: viewport.width,
        header: Math.round(header.height),
        boardBottom: Math.round(board.y + board.height),
        height: viewport.height,
      });
      await snap(page, `layout-${game}-${viewport.width}`, { fullPage: false });
    }
  });
}

test('the admin user table and the settings fit or scroll in their own box at 360 px', async ({
  newSession,
  admin,
  snap,
}) => {
  const { page } = await newSession({ viewport: { width: 360, height: 780 } });
  await page.goto('/');
  await signIn(page, admin.user, admin.password);
  for (const path of ['/admin', '/settings', '/bets']) {
    await page.goto(path);
    await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
    if (path === '/admin') await expect(page.getByRole('table').first()).toBeVisible();
    await settled(page);
    await expect
      .poll(() => overflow(page), { message: `${path}: page scrolls sideways or elements past the edge` })
      .toEqual({ sideways: null, offenders: [] });
    await snap(page, `layout${path.replace('/', '-')}-360`, { fullPage: false });
  }
});

test('layout figures', () => {
  const lines = ['game       width  header  board bottom / screen'];
  for (const f of layoutFigures) {
    lines.push(
      `${f.game.padEnd(10)} ${String(f.width).padStart(5)}  ${String(f.header).padStart(4)} px  ${f.boardBottom} / ${f.height}`,
    );
  }
  console.log(lines.map((l) => `     ${l}`).join('\n'));
  for (const f of layoutFigures.filter((x) => x.width === 360)) {
    test.info().annotations.push({ type: `board bottom ${f.game} 360×780`, description: `${f.boardBottom} px` });
  }
  expect(layoutFigures).toHaveLength(GAMES.length * VIEWPORTS.length);
});

/**
 * watchBalance records in the page every text the header balance shows from
 * now on, and whether a game's result (resultSelector) was on screen at the
 * time.
 */
async function watchBalance(page: Page, resultSelector: string | null) {
  await page.evaluate((selector) => {
    const w = window as unknown as { __balances: { text: string; result: boolean }[] };
    w.__balances = [];
    let last = document.querySelector('[data-testid="balance"]')?.textContent ?? '';
    new MutationObserver(() => {
      const text = document.querySelector('[data-testid="balance"]')?.textContent ?? '';
      if (text === last) return;
      last = text;
      w.__balances.push({ text, result: selector ? document.querySelector(selector) !== null : false });
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  }, resultSelector);
}

function balances(page: Page) {
  return page.evaluate(() => (window as unknown as { __balances: { text: string; result: boolean }[] }).__balances);
}

/**
 * balanceAfterResponse plays act and returns the header before it, the game's
 * response body and the first balance the header showed after it.
 */
async function balanceAfterResponse(page: Page, path: string, act: () => Promise<void>) {
  const before = (await page.getByTestId('balance').textContent()) ?? '';
  await watchBalance(page, null);
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith(path) && r.request().method() === 'POST'),
    act(),
  ]);
  const body = (await response.json()) as { winAmount: number; newBalance: number; result?: string };
  // The first change the header shows after the response.
  await expect
    .poll(async () => (await balances(page)).length, { message: `${path}: the header never changed` })
    .toBeGreaterThan(0);
  const shown = (await balances(page))[0]?.text ?? '';
  return { before, body, shown };
}

test('suspense: the header balance waits for the animation (Plinko, Keno, Dice, Blackjack)', async ({
  signedInPage: page,
}) => {
  const header = page.getByTestId('balance');

  // Plinko, 16 rows: 18 path points at 150 ms, 2.6 s in the air.
  await openGame(page, 'plinko');
  await page.getByLabel('Rows').fill('16');
  const p = await balanceAfterResponse(page, '/api/games/plinko', () =>
    page.getByRole('button', { name: 'Drop Ball' }).click(),
  );
  const balanceBefore = Number(p.before.replace(/[$,]/g, ''));
  expect(p.shown, 'plinko: right after the response the header shows only the stake gone').toBe(
    money(balanceBefore - 1),
  );
  expect(p.body.winAmount, 'plinko multipliers are never 0').toBeGreaterThan(0);
  expect(p.shown, 'plinko: the settled balance is not shown while the ball falls').not.toBe(money(p.body.newBalance));
  await expect(header).toHaveText(money(p.body.newBalance));
  figure('plinko', `${p.before} → ${p.shown} in flight → ${money(p.body.newBalance)} on landing`);

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
  expect(k.shown, 'keno: right after the response the header shows only the stake gone').toBe(money(kenoBefore - 1));
  if (k.body.winAmount > 0) expect(k.shown, 'keno: no win before the last flip').not.toBe(money(k.body.newBalance));
  await expect(page.getByText(resultText), 'keno: no result before the last flip').toHaveCount(0);
  await expect(page.getByText(resultText)).toBeVisible();
  await expect(header, 'keno: the balance after the last flip').toHaveText(money(k.body.newBalance));
  figure('keno', `${k.before} → ${k.shown} while flipping → ${money(k.body.newBalance)} (win ${k.body.winAmount})`);

  // Dice: the marker slides for 450 ms before the result shows.
  await openGame(page, 'dice');
  await page.getByLabel('Roll Under').fill('98');
  const d = await balanceAfterResponse(page, '/api/games/dice', () =>
    page.getByRole('button', { name: 'Roll Dice' }).click(),
  );
  const diceBefore = Number(d.before.replace(/[$,]/g, ''));
  expect(d.shown, 'dice: right after the response the header shows only the stake gone').toBe(money(diceBefore - 1));
  await expect(page.getByText(/^(WIN|LOSE)!$/)).toBeVisible();
  await expect(header, 'dice: the balance once the roll lands').toHaveText(money(d.body.newBalance));
  figure('dice', `${d.before} → ${d.shown} while rolling → ${money(d.body.newBalance)}`);

  // Blackjack: stand, and the balance waits for the dealer's cards.
  await openGame(page, 'blackjack');
  const bannerSelector = '[data-testid="game-board"] [aria-live] strong';
  const banner = page.locator(bannerSelector);
  let played = false;
  for (let hand = 0; hand < 5 && !played; hand++) {
    await page.getByRole('button', { name: 'Deal' }).click();
    const stand = page.getByRole('button', { name: /^Stand/ }).and(page.locator(':enabled'));
    await declineInsurance(page, banner.or(stand));
    if (await banner.isVisible()) {
      // A natural: the deal settled the game; play another hand.
      await page.getByRole('button', { name: 'New Game' }).click();
      continue;
    }
    const before = (await page.getByTestId('balance').textContent()) ?? '';
    await watchBalance(page, bannerSelector);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/games/blackjack/stand') && r.request().method() === 'POST'),
      stand.click(),
    ]);
    expect(await banner.count(), 'blackjack: no result before the dealer reveal').toBe(0);
    const body = (await response.json()) as { winAmount: number; newBalance: number; result?: string };
    await expect(banner).toBeVisible();
    await expect(header, 'blackjack: the balance after the dealer reveal').toHaveText(money(body.newBalance));
    const changes = await balances(page);
    if (body.winAmount > 0) {
      expect(
        changes.filter((c) => !c.result),
        'blackjack: the balance stays during the dealer reveal',
      ).toEqual([]);
    }
    figure('blackjack', `${before} during the dealer reveal → ${money(body.newBalance)} (${body.result ?? ''})`);
    played = true;
  }
  expect(played, 'blackjack: five naturals in a row').toBe(true);
});

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * axeScan runs axe-core on the page as it is, once its animations have
 * finished (axe would measure the contrast of half-transparent text).
 * addScriptTag puts axe inline, which the app's Content-Security-Policy
 * forbids (script-src 'self'), so the axe contexts bypass the CSP; every
 * other test keeps it and fails on any violation.
 */
async function axeScan(page: Page): Promise<AxeViolation[]> {
  await settled(page);
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: axePath });
  return page.evaluate(async () => {
    interface AxeResult {
      violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
    }
    const axe = (window as unknown as { axe: { run: (d: Document, o: object) => Promise<AxeResult> } }).axe;
    const res = await axe.run(document, { resultTypes: ['violations'] });
    return res.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5),
    }));
  });
}

const axeResults: { screen: string; width: number; violations: AxeViolation[] }[] = [];

for (const width of [360, 1280]) {
  test(`axe at ${width} px: every screen without a serious or critical violation`, async ({ newSession, admin }) => {
    const viewport = { width, height: width === 360 ? 780 : 800 };
    const scan = async (page: Page, screen: string) => {
      axeResults.push({ screen, width, violations: await axeScan(page) });
    };
    const axeSession = () => newSession({ viewport, bypassCSP: true, guard: false });

    const guest = (await axeSession()).page;
    await guest.goto('/');
    await expect(guest.getByRole('heading', { level: 1 })).toBeVisible();
    await scan(guest, 'home (guest)');
    await guest.getByRole('button', { name: 'Sign In' }).click();
    await expect(guest.getByRole('dialog', { name: 'Sign In' }).getByLabel('Password')).toBeVisible();
    await scan(guest, 'sign-in dialog');
    await guest.keyboard.press('Escape');
    await guest.getByRole('button', { name: 'Register' }).click();
    await expect(guest.getByRole('dialog', { name: 'Register' }).getByLabel('Confirm Password')).toBeVisible();
    await scan(guest, 'register dialog');
    await guest.keyboard.press('Escape');
    await guest.goto('/games/plinko');
    await expect(guest.getByRole('heading', { level: 1 })).toBeVisible();
    await scan(guest, 'plinko (guest)');
    await guest.goto('/no-such-page');
    await expect(guest.getByRole('heading', { level: 1 })).toBeVisible();
    await scan(guest, 'not found');

    const username = await player(`axe${width}`);
    const page = (await axeSession()).page;
    await page.goto('/');
    await signIn(page, username, PASSWORD);
    for (const game of GAMES) {
      await openGame(page, game);
      await scan(page, `${game} (before a bet)`);
      await ACTIONS[game](page);
      await scan(page, `${game} (after a bet)`);
    }
    await page.getByRole('button', { name: 'Fairness' }).click();
    await expect(
      page.getByRole('dialog', { name: 'Fairness' }).getByText('Active server seed (SHA-256)'),
    ).toBeVisible();
    await scan(page, 'fairness dialog');
    await page.keyboard.press('Escape');
    if (width < 1024) {
      await page.getByRole('button', { name: /account menu$/ }).click();
      await expect(page.getByRole('menu')).toBeVisible();
      await scan(page, 'account menu');
      await page.keyboard.press('Escape');
    }
    for (const path of ['/settings', '/bets']) {
      await page.goto(path);
      await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
      await scan(page, path);
    }

    const adminPage = (await axeSession()).page;
    await adminPage.goto('/');
    await signIn(adminPage, admin.user, admin.password);
    await adminPage.goto('/admin');
    await expect(adminPage.getByRole('heading', { level: 1 })).toBeVisible();
    await expect(adminPage.getByRole('table').first()).toBeVisible();
    await scan(adminPage, '/admin');
    await adminPage.getByRole('button', { name: 'Manage' }).first().click();
    await expect(adminPage.getByRole('dialog')).toBeVisible();
    await scan(adminPage, 'manage user dialog');

    const bad = axeResults
      .filter((r) => r.width === width)
      .flatMap((r) =>
        r.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => ({ screen: r.screen, ...v })),
      );
    expect(bad, `serious or critical axe violations at ${width} px`).toEqual([]);
  });
}

test('axe summary', async () => {
  const impacts = ['critical', 'serious', 'moderate', 'minor'] as const;
  const rows = axeResults.map((r) => {
    const counts = Object.fromEntries(
      impacts.map((i) => [i, r.violations.filter((v) => v.impact === i).length]),
    ) as Record<(typeof impacts)[number], number>;
    return { screen: r.screen, width: r.width, ...counts, rules: [...new Set(r.violations.map((v) => v.id))] };
  });
  const lines = [`${'screen'.padEnd(26)} width  critical serious moderate minor  rules`];
  for (const r of rows) {
    lines.push(
      `${r.screen.padEnd(26)} ${String(r.width).padStart(5)}  ${String(r.critical).padStart(8)} ${String(r.serious).padStart(7)} ${String(r.moderate).padStart(8)} ${String(r.minor).padStart(5)}  ${r.rules.join(', ')}`,
    );
  }
  console.log(lines.map((l) => `     ${l}`).join('\n'));
  await mkdir(dirname(axeSummaryFile), { recursive: true });
  await writeFile(axeSummaryFile, JSON.stringify({ axeVersion, screens: rows, details: axeResults }, null, 2));
  console.log(`     written to ${axeSummaryFile}`);
  const serious = rows.reduce((n, r) => n + r.critical + r.serious, 0);
  test.info().annotations.push({
    type: 'axe',
    description: `axe-core ${axeVersion}: ${rows.length} screens, ${serious} critical or serious violations`,
  });
  expect(rows.length).toBeGreaterThan(0);
});
