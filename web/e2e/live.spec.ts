// Live bets between two browsers (A bets, B watches), the game screen's new
// parts, the hidden username, the My Bets page and the daily top-up, against
// the real server. Prints the live-bet latency: from a bet's response in A to
// its row in B's table, p50 and p99 over LATENCY_BETS bets.
// The tests run in order and share two players (alice, bob).
import { api, expect, figure, login, registerUser, signIn, test, type Page, type Player } from './fixtures';

test.describe.configure({ mode: 'serial' });

const PASSWORD = 'Passw0rd!';
const LATENCY_BETS = 50;
const stamp = Date.now().toString(36).slice(-5);

let alice: Player;
let bob: Player;

test.beforeAll(async () => {
  alice = await registerUser(`alice_${stamp}`, PASSWORD);
  bob = await registerUser(`bob_${stamp}`, PASSWORD);
});

type NewSession = Parameters<Parameters<typeof test>[2]>[0]['newSession'];

/** browserFor opens a browser signed in as username on path. */
async function browserFor(newSession: NewSession, username: string, path: string) {
  const { page } = await newSession();
  await page.goto('/');
  await signIn(page, username, PASSWORD);
  await page.goto(path);
  return page;
}

/** liveReady waits until the All bets table says its stream is open. */
async function liveReady(page: Page) {
  await expect(page.getByRole('table', { name: 'All bets' })).toBeVisible();
  await expect(page.getByText('Live', { exact: true })).toBeVisible();
}

function diceBet(token: string, amount: number) {
  return api('POST', '/api/games/dice', { betAmount: amount, rollTarget: 50 }, token);
}

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** The width the page scrolls to (at most the viewport's when nothing overflows). */
function scrollWidth(page: Page) {
  return page.evaluate(() => document.documentElement.scrollWidth);
}

test('B sees A’s bet live; in A’s own table, strip, My bets and Live stats it waits for A’s reveal', async ({
  newSession,
}) => {
  const a = await browserFor(newSession, alice.username, '/games/plinko');
  const b = await browserFor(newSession, bob.username, '/games/dice');
  await Promise.all([liveReady(a), liveReady(b)]);
  await expect(a.getByRole('list', { name: 'Recent results' })).toBeVisible();

  // In A's page: when did the strip gain a result (the reveal), and when did A's row reach A's table?
  await a.evaluate((name) => {
    const w = window as unknown as { __seen: { strip: number; row: number } };
    w.__seen = { strip: 0, row: 0 };
    const strip = document.querySelector('[aria-label="Recent results"]');
    const before = strip?.querySelectorAll('li').length ?? 0;
    const first = strip?.querySelector('li')?.textContent;
    new MutationObserver(() => {
      const s = document.querySelector('[aria-label="Recent results"]');
      const items = s?.querySelectorAll('li') ?? [];
      if (!w.__seen.strip && (items.length !== before || items[0]?.textContent !== first)) w.__seen.strip = Date.now();
      const table = document.querySelector('table[aria-label="All bets"]');
      const mine = [...(table?.querySelectorAll('tbody tr') ?? [])].some((tr) => tr.textContent.includes(name));
      if (mine && !w.__seen.row) w.__seen.row = Date.now();
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  }, alice.username);

  await a.getByLabel('Bet Amount').fill('1.23');
  const [response] = await Promise.all([
    a.waitForResponse((r) => r.url().endsWith('/api/games/plinko') && r.request().method() === 'POST'),
    a.getByRole('button', { name: 'Drop Ball' }).click(),
  ]);
  expect(response.status()).toBe(200);
  const answeredAt = Date.now();

  const rowInB = b.getByRole('table', { name: 'All bets' }).getByRole('row').filter({ hasText: alice.username });
  await expect(rowInB.first()).toBeVisible();
  await expect(rowInB.first()).toHaveText(/Plinko/);
  await expect(rowInB.first()).toHaveText(/\$1\.23/);
  figure('A’s bet in B’s table', `${Date.now() - answeredAt} ms after A’s response`);

  const seen = () => a.evaluate(() => (window as unknown as { __seen: { strip: number; row: number } }).__seen);
  await expect.poll(async () => (await seen()).row, { message: 'A’s row never reached A’s table' }).toBeGreaterThan(0);
  const { strip, row } = await seen();
  expect(strip, 'the recent results strip never showed the reveal (the game announced none)').toBeGreaterThan(0);
  expect(row, `A's row reached A's table ${strip - row} ms before A's reveal`).toBeGreaterThanOrEqual(strip);
  figure('A’s row in A’s table', `${row - answeredAt} ms after the response, at the reveal`);

  // My bets and Live stats in A count the bet from its reveal.
  await a.getByRole('tab', { name: 'My bets' }).click();
  await expect(a.getByRole('table', { name: 'My bets' }).getByText('$1.23').first()).toBeVisible();
  await a.getByRole('button', { name: 'Live stats' }).click();
  await expect(a.getByRole('region', { name: 'Live stats' }).getByText('$1.23').first()).toBeVisible();
});

test('a game screen with the new parts at 1280 and 360 px', async ({ newSession, snap }) => {
  // A few more results, so the strip and the table have something to show.
  for (const amount of [0.4, 0.5, 0.6]) expect((await diceBet(alice.token, amount)).status).toBe(200);
  const a = await browserFor(newSession, alice.username, '/games/dice');
  const b = await browserFor(newSession, bob.username, '/games/dice');
  await Promise.all([liveReady(a), liveReady(b)]);
  const pills = a.getByRole('list', { name: 'Recent results' }).getByRole('listitem');
  await expect.poll(() => pills.count()).toBeGreaterThanOrEqual(3);
  await expect(pills.first()).toHaveText(/^\d+\.\d\dx (win|loss)$/);
  for (const amount of [7.77, 8.88]) expect((await diceBet(alice.token, amount)).status).toBe(200);
  await expect(a.getByRole('table', { name: 'All bets' }).getByText('$8.88')).toBeVisible();
  await a.getByRole('button', { name: 'Live stats' }).click();
  await expect(a.getByRole('region', { name: 'Live stats' })).toBeVisible();
  await snap(a, 'game-1280');
  await a.setViewportSize({ width: 360, height: 780 });
  await expect.poll(() => scrollWidth(a), { message: 'the game screen overflows at 360 px' }).toBeLessThanOrEqual(360);
  await snap(a, 'game-360');
});

test('A hides the username: B shows Hidden', async ({ newSession }) => {
  const a = await browserFor(newSession, alice.username, '/settings');
  const b = await browserFor(newSession, bob.username, '/games/dice');
  await liveReady(b);
  const toggle = a.getByRole('switch', { name: 'Hide my username in live bets' });
  await expect(toggle).toHaveAttribute('aria-checked', 'false');
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-checked', 'true');
  // The switch shows the new state while the request is pending: the server's answer is what counts.
  const hidden = async () => (await api('GET', '/api/auth/user', undefined, alice.token)).json?.user.hideUsername;
  await expect.poll(hidden, { message: 'the server never stored hideUsername' }).toBe(true);

  expect((await diceBet(alice.token, 4.56)).status).toBe(200);
  const row = b.getByRole('table', { name: 'All bets' }).getByRole('row').filter({ hasText: '$4.56' }).first();
  await expect(row).toBeVisible();
  await expect(row).toHaveText(/Hidden/);
  await expect(row, 'the hidden name still shows').not.toHaveText(new RegExp(alice.username));

  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-checked', 'false');
  await expect.poll(hidden, { message: 'the server never cleared hideUsername' }).toBe(false);
  expect((await diceBet(alice.token, 4.57)).status).toBe(200);
  const named = b.getByRole('table', { name: 'All bets' }).getByRole('row').filter({ hasText: '$4.57' }).first();
  await expect(named).toHaveText(new RegExp(alice.username));
});

test(`live-bet latency over ${LATENCY_BETS} bets: A's response to B's row`, async ({ newSession }) => {
  const b = await browserFor(newSession, bob.username, '/games/dice');
  await liveReady(b);
  /** amount text → when the row showed in B */
  const shown = new Map<string, number>();
  const waiting = new Map<string, () => void>();
  await b.exposeBinding('__liveRow', (_src, amount: string, at: number) => {
    if (!shown.has(amount)) shown.set(amount, at);
    waiting.get(amount)?.();
  });
  await b.evaluate(() => {
    const table = document.querySelector('table[aria-label="All bets"]');
    if (!table) throw new Error('no All bets table');
    const report = (window as unknown as { __liveRow: (amount: string, at: number) => void }).__liveRow;
    new MutationObserver((records) => {
      const at = Date.now();
      for (const r of records)
        for (const node of r.addedNodes)
          if (node instanceof HTMLTableRowElement) report(node.cells.item(3)?.textContent ?? '', at);
    }).observe(table, { subtree: true, childList: true });
  });
  /** rowIn resolves when B's table shows a row of amount label (or rejects after 5 s). */
  const rowIn = (label: string) =>
    new Promise<void>((resolve, reject) => {
      if (shown.has(label)) {
        resolve();
        return;
      }
      const timer = setTimeout(() => {
        reject(new Error(`${label} never reached B's table`));
      }, 5000);
      waiting.set(label, () => {
        clearTimeout(timer);
        resolve();
      });
    });

  const latencies: number[] = [];
  for (let i = 1; i <= LATENCY_BETS; i++) {
    const amount = Math.round(200 + i) / 100;
    const label = `$${amount.toFixed(2)}`;
    const arrived = rowIn(label);
    const res = await diceBet(alice.token, amount);
    const answeredAt = Date.now();
    expect(res.status, `bet ${i}`).toBe(200);
    await arrived;
    latencies.push(Math.max(0, (shown.get(label) ?? NaN) - answeredAt));
  }
  latencies.sort((x, y) => x - y);
  figure(
    'live-bet latency',
    `response in A → row in B (${latencies.length} bets): ` +
      `p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${latencies.at(-1)} ms`,
  );
});

test('My Bets lists, filters and verifies', async ({ newSession, snap }) => {
  const keno = await api(
    'POST',
    '/api/games/keno',
    { betAmount: 0.5, riskLevel: 'low', selectedNumbers: [1, 2, 3] },
    alice.token,
  );
  expect(keno.status, JSON.stringify(keno.json)).toBe(200);
  const a = await browserFor(newSession, alice.username, '/bets');
  await expect(a.getByRole('heading', { level: 1, name: 'My Bets' })).toBeVisible();
  const table = a.getByRole('table', { name: 'Your bets, newest first' });
  const rows = table.locator('tbody tr');
  await expect(table).toBeVisible();
  await expect.poll(() => rows.count(), { message: 'expected a full page of bets' }).toBeGreaterThanOrEqual(20);
  await expect(rows.first()).toHaveText(/Keno/);

  await a.getByLabel('Game').selectOption('plinko');
  const plinko = a.getByRole('table', { name: 'Your Plinko bets, newest first' });
  await expect(plinko).toBeVisible();
  await expect(plinko.locator('tbody tr')).toHaveCount(1);
  await expect(a).toHaveURL(/\/bets\?game=plinko$/);
  await a.getByLabel('Game').selectOption('keno');
  await expect(a.getByRole('table', { name: 'Your Keno bets, newest first' })).toBeVisible();
  await a.getByLabel('Game').selectOption('all');
  await expect(table).toBeVisible();

  // Scrolling down loads the next batches, until the end.
  const more = a.getByRole('button', { name: /^(Load more|Loading…)$/ });
  const end = a.getByText(/^That's all: \d+ bets\.$/);
  for (let i = 0; i < 10 && !(await end.isVisible()); i++) {
    const before = await rows.count();
    await more.scrollIntoViewIfNeeded().catch(() => undefined);
    await expect
      .poll(async () => (await end.isVisible()) || (await rows.count()) > before, {
        message: 'scrolling to Load more loaded nothing',
      })
      .toBe(true);
  }
  await expect(end).toBeVisible();
  const total = await rows.count();
  expect(total, 'expected every bet after scrolling').toBeGreaterThan(40);
  await expect(end).toHaveText(`That's all: ${total} bets.`);
  await snap(a, 'bets-1280');

  await table
    .getByRole('button', { name: /^Dice bet/ })
    .first()
    .click();
  const dialog = a.getByRole('dialog', { name: 'Bet details' });
  await dialog.getByRole('button', { name: 'Reveal the seed and verify' }).click();
  await expect(dialog.getByText('✓ Verified in your browser: the result matches the record')).toBeVisible();
  await expect(dialog.getByText('The server recomputes the same result')).toBeVisible();
  const betId = new URL(a.url()).searchParams.get('bet');
  expect(betId, 'the dialog has its own address').toBeTruthy();
  await a.keyboard.press('Escape');
  await expect(dialog).toBeHidden();

  // The deep link opens the same bet, already verifiable.
  await a.goto(`/bets?bet=${betId ?? ''}`);
  await expect(dialog.getByText('✓ Verified in your browser: the result matches the record')).toBeVisible();
  await a.keyboard.press('Escape');

  await a.setViewportSize({ width: 360, height: 780 });
  await expect.poll(() => scrollWidth(a), { message: '/bets overflows at 360 px' }).toBeLessThanOrEqual(360);
  await snap(a, 'bets-360');
});

test('a drained player claims the daily top-up', async ({ newSession, admin }) => {
  const carol = await registerUser(`carol_${stamp}`, PASSWORD);
  const signedIn = await login(admin.user, admin.password);
  expect(signedIn.status).toBe(200);
  const adminToken = signedIn.json?.token;
  const drain = await api('PATCH', `/api/auth/users/${carol.id}/balance`, { amount: -999.95 }, adminToken);
  expect(drain.status, JSON.stringify(drain.json)).toBe(200);

  const c = await browserFor(newSession, carol.username, '/games/dice');
  await expect(c.getByTestId('balance')).toHaveText('$0.05');
  const offer = c.getByRole('region', { name: 'Daily top-up' });
  await offer.getByRole('button', { name: 'Claim $100.00' }).click();
  await expect(c.getByTestId('balance')).toHaveText('$100.05');
  await expect(offer).toHaveCount(0);
  const me = await api('GET', '/api/auth/user', undefined, carol.token);
  expect(me.json?.user.balance).toBe(100.05);

  // Drained again the same day: the offer says when the next one comes, and a claim is refused.
  expect((await api('PATCH', `/api/auth/users/${carol.id}/balance`, { amount: -100 }, adminToken)).status).toBe(200);
  await c.reload();
  await expect(
    offer.getByText(/next daily top-up of \$100\.00 is available in (23 h 59 min|24 h 0 min)/),
  ).toBeVisible();
  await expect(offer.getByRole('button')).toHaveCount(0);
  const again = await api('POST', '/api/wallet/top-up', {}, carol.token);
  expect(again.status).toBe(409);
});
