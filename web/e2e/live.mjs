// End-to-end: the live bets table across two browsers, the privacy switch, the
// My Bets page and the daily top-up, against the real server (hack/e2e.sh).
// Prints the live-bet latency: from a bet's response in A to its row in B's
// table, p50 and p99 over LATENCY_BETS bets.
// Environment: E2E_BASE_URL, E2E_ADMIN_USER and E2E_ADMIN_PASSWORD (hack/e2e.sh).
import assert from 'node:assert/strict';
import { api, newPage, registerUser, run, signIn, snap, test } from './harness.mjs';

const PASSWORD = 'Passw0rd!';
const LATENCY_BETS = 50;
const admin = { user: process.env.E2E_ADMIN_USER, password: process.env.E2E_ADMIN_PASSWORD };
const stamp = Date.now().toString(36).slice(-5);

/** A registered player with a token for API calls from the test (their own session, as another device). */
async function player(name) {
  const username = `${name}_${stamp}`;
  const res = await registerUser(username, PASSWORD);
  return { username, token: res.token, id: res.user._id };
}

/** A browser signed in as username on path. */
async function browserFor(username, path, viewport) {
  const ctx = await newPage(viewport);
  await ctx.page.goto('/');
  await signIn(ctx.page, username, PASSWORD);
  await ctx.page.goto(path);
  return ctx;
}

/** Waits until the All bets table says its stream is open. */
async function liveReady(page) {
  await page.getByRole('table', { name: 'All bets' }).waitFor();
  await page.getByText('Live', { exact: true }).waitFor({ timeout: 10000 });
}

function diceBet(token, amount) {
  return api('POST', '/api/games/dice', { betAmount: amount, rollTarget: 50 }, token);
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function noErrors(errors, who) {
  assert.deepEqual(errors, [], `${who}: page errors or CSP violations`);
}

const alice = await player('alice');
const bob = await player('bob');

test('B sees A’s bet live; in A’s own table, strip, My bets and Live stats it waits for A’s reveal', async () => {
  const a = await browserFor(alice.username, '/games/plinko');
  const b = await browserFor(bob.username, '/games/dice');
  await Promise.all([liveReady(a.page), liveReady(b.page)]);
  await a.page.getByRole('list', { name: 'Recent results' }).waitFor();

  // In A's page: when did the strip gain a result (the reveal), and when did A's row reach A's table?
  await a.page.evaluate((name) => {
    const w = /** @type {any} */ (window);
    w.__seen = { strip: 0, row: 0 };
    const strip = document.querySelector('[aria-label="Recent results"]');
    const before = strip?.querySelectorAll('li').length ?? 0;
    const first = strip?.querySelector('li')?.textContent;
    new MutationObserver(() => {
      const s = document.querySelector('[aria-label="Recent results"]');
      const items = s?.querySelectorAll('li') ?? [];
      if (!w.__seen.strip && (items.length !== before || items[0]?.textContent !== first)) w.__seen.strip = Date.now();
      const table = document.querySelector('table[aria-label="All bets"]');
      const mine = [...(table?.querySelectorAll('tbody tr') ?? [])].some((tr) => tr.textContent?.includes(name));
      if (mine && !w.__seen.row) w.__seen.row = Date.now();
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  }, alice.username);

  await a.page.getByLabel('Bet Amount').fill('1.23');
  const [response] = await Promise.all([
    a.page.waitForResponse((r) => r.url().endsWith('/api/games/plinko') && r.request().method() === 'POST'),
    a.page.getByRole('button', { name: 'Drop Ball' }).click(),
  ]);
  assert.equal(response.status(), 200);
  const answeredAt = Date.now();

  const rowInB = b.page.getByRole('table', { name: 'All bets' }).getByRole('row').filter({ hasText: alice.username });
  await rowInB.first().waitFor({ timeout: 10000 });
  assert.match((await rowInB.first().textContent()) ?? '', /Plinko/);
  assert.match((await rowInB.first().textContent()) ?? '', /\$1\.23/);
  console.log(`     A's bet in B's table ${Date.now() - answeredAt} ms after A's response`);

  await a.page.waitForFunction(() => /** @type {any} */ (window).__seen.row > 0, null, { timeout: 15000 });
  const seen = await a.page.evaluate(() => /** @type {any} */ (window).__seen);
  try {
    assert.ok(seen.strip > 0, 'the recent results strip never showed the reveal (the game announced none)');
    assert.ok(seen.row >= seen.strip, `A's row reached A's table ${seen.strip - seen.row} ms before A's reveal`);
    console.log(`     A's row in A's table ${seen.row - answeredAt} ms after the response, at the reveal`);

    // My bets and Live stats in A count the bet from its reveal.
    await a.page.getByRole('tab', { name: 'My bets' }).click();
    await a.page.getByRole('table', { name: 'My bets' }).getByText('$1.23').first().waitFor();
    await a.page.getByRole('button', { name: 'Live stats' }).click();
    await a.page.getByRole('region', { name: 'Live stats' }).getByText('$1.23').first().waitFor();
    noErrors(a.errors, 'A');
    noErrors(b.errors, 'B');
  } finally {
    await a.context.close();
    await b.context.close();
  }
});

test('a game screen with the new parts at 1280 and 360 px', async () => {
  // A few more results, so the strip and the table have something to show.
  for (const amount of [0.4, 0.5, 0.6]) assert.equal((await diceBet(alice.token, amount)).status, 200);
  const a = await browserFor(alice.username, '/games/dice');
  const b = await browserFor(bob.username, '/games/dice');
  await Promise.all([liveReady(a.page), liveReady(b.page)]);
  const pills = a.page.getByRole('list', { name: 'Recent results' }).getByRole('listitem');
  await a.page.waitForFunction(
    () => (document.querySelector('[aria-label="Recent results"]')?.querySelectorAll('li').length ?? 0) >= 3,
  );
  assert.match((await pills.first().textContent()) ?? '', /^\d+\.\d\dx (win|loss)$/);
  for (const amount of [7.77, 8.88]) assert.equal((await diceBet(alice.token, amount)).status, 200);
  await a.page.getByRole('table', { name: 'All bets' }).getByText('$8.88').waitFor({ timeout: 10000 });
  await a.page.getByRole('button', { name: 'Live stats' }).click();
  await a.page.getByRole('region', { name: 'Live stats' }).waitFor();
  await snap(a.page, 'game-1280');
  await a.page.setViewportSize({ width: 360, height: 780 });
  await a.page.waitForTimeout(200);
  const width = await a.page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 360, `the game screen overflows at 360 px (${width})`);
  await snap(a.page, 'game-360');
  noErrors(a.errors, 'A');
  noErrors(b.errors, 'B');
  await a.context.close();
  await b.context.close();
});

test('A hides the username: B shows Hidden', async () => {
  const a = await browserFor(alice.username, '/settings');
  const b = await browserFor(bob.username, '/games/dice');
  await liveReady(b.page);
  const toggle = a.page.getByRole('switch', { name: 'Hide my username in live bets' });
  assert.equal(await toggle.getAttribute('aria-checked'), 'false');
  await toggle.click();
  await a.page.waitForFunction(
    () => document.querySelector('[role="switch"]')?.getAttribute('aria-checked') === 'true',
  );
  const me = await api('GET', '/api/auth/user', undefined, alice.token);
  assert.equal(me.json.user.hideUsername, true);

  const res = await diceBet(alice.token, 4.56);
  assert.equal(res.status, 200);
  const row = b.page.getByRole('table', { name: 'All bets' }).getByRole('row').filter({ hasText: '$4.56' });
  await row.first().waitFor({ timeout: 10000 });
  const text = (await row.first().textContent()) ?? '';
  assert.match(text, /Hidden/);
  assert.ok(!text.includes(alice.username), 'the hidden name still shows');

  await toggle.click();
  await a.page.waitForFunction(
    () => document.querySelector('[role="switch"]')?.getAttribute('aria-checked') === 'false',
  );
  assert.equal((await diceBet(alice.token, 4.57)).status, 200);
  const named = b.page.getByRole('table', { name: 'All bets' }).getByRole('row').filter({ hasText: '$4.57' });
  await named.first().waitFor({ timeout: 10000 });
  assert.match((await named.first().textContent()) ?? '', new RegExp(alice.username));
  noErrors(a.errors, 'A');
  noErrors(b.errors, 'B');
  await a.context.close();
  await b.context.close();
});

test(`live-bet latency over ${LATENCY_BETS} bets: A's response to B's row`, async () => {
  const b = await browserFor(bob.username, '/games/dice');
  await liveReady(b.page);
  /** @type {Map<string, number>} amount text → when the row showed in B */
  const shown = new Map();
  await b.page.exposeBinding('__liveRow', (_src, amount, at) => {
    if (!shown.has(amount)) shown.set(amount, at);
  });
  await b.page.evaluate(() => {
    const table = document.querySelector('table[aria-label="All bets"]');
    new MutationObserver((records) => {
      const at = Date.now();
      for (const r of records)
        for (const node of r.addedNodes)
          if (node instanceof HTMLTableRowElement) {
            const amount = node.cells[3]?.textContent ?? '';
            /** @type {any} */ (window).__liveRow(amount, at);
          }
    }).observe(table, { subtree: true, childList: true });
  });

  const latencies = [];
  for (let i = 1; i <= LATENCY_BETS; i++) {
    const amount = Math.round(200 + i) / 100;
    const label = `$${amount.toFixed(2)}`;
    const res = await diceBet(alice.token, amount);
    const answeredAt = Date.now();
    assert.equal(res.status, 200, `bet ${i}: ${res.status}`);
    const deadline = answeredAt + 5000;
    while (!shown.has(label) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    assert.ok(shown.has(label), `bet ${i} (${label}) never reached B's table`);
    latencies.push(Math.max(0, shown.get(label) - answeredAt));
  }
  latencies.sort((x, y) => x - y);
  console.log(
    `     live-bet latency, response in A → row in B (${latencies.length} bets): ` +
      `p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${latencies.at(-1)} ms`,
  );
  noErrors(b.errors, 'B');
  await b.context.close();
});

test('My Bets lists, filters and verifies', async () => {
  const keno = await api(
    'POST',
    '/api/games/keno',
    { betAmount: 0.5, riskLevel: 'low', selectedNumbers: [1, 2, 3] },
    alice.token,
  );
  assert.equal(keno.status, 200, JSON.stringify(keno.json));
  const a = await browserFor(alice.username, '/bets');
  await a.page.getByRole('heading', { level: 1, name: 'My Bets' }).waitFor();
  const table = a.page.getByRole('table', { name: 'Your bets, newest first' });
  await table.waitFor();
  const all = await table.locator('tbody tr').count();
  assert.ok(all >= 20, `expected a full page of bets, saw ${all}`);
  assert.match((await table.locator('tbody tr').first().textContent()) ?? '', /Keno/);

  await a.page.getByLabel('Game').selectOption('plinko');
  const plinko = a.page.getByRole('table', { name: 'Your Plinko bets, newest first' });
  await plinko.waitFor();
  assert.equal(await plinko.locator('tbody tr').count(), 1);
  assert.equal(new URL(a.page.url()).search, '?game=plinko');
  await a.page.getByLabel('Game').selectOption('keno');
  await a.page.getByRole('table', { name: 'Your Keno bets, newest first' }).waitFor();
  await a.page.getByLabel('Game').selectOption('all');
  await table.waitFor();

  // Scrolling down loads the next batches, until the end.
  const more = a.page.getByRole('button', { name: /^(Load more|Loading…)$/ });
  for (let i = 0; i < 10 && (await more.count()) > 0; i++) {
    await more.scrollIntoViewIfNeeded().catch(() => undefined);
    await a.page.waitForTimeout(300);
  }
  const end = a.page.getByText(/^That's all: \d+ bets\.$/);
  await end.waitFor({ timeout: 10000 });
  const total = await table.locator('tbody tr').count();
  assert.ok(total > 40, `expected every bet after scrolling, saw ${total}`);
  assert.equal(await end.textContent(), `That's all: ${total} bets.`);
  await snap(a.page, 'bets-1280');

  await table
    .getByRole('button', { name: /^Dice bet/ })
    .first()
    .click();
  const dialog = a.page.getByRole('dialog', { name: 'Bet details' });
  await dialog.getByRole('button', { name: 'Reveal the seed and verify' }).click();
  await dialog.getByText('✓ Verified in your browser: the result matches the record').waitFor({ timeout: 10000 });
  await dialog.getByText('The server recomputes the same result').waitFor();
  const betId = new URL(a.page.url()).searchParams.get('bet');
  assert.ok(betId, 'the dialog has its own address');
  await a.page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });

  // The deep link opens the same bet, already verifiable.
  await a.page.goto(`/bets?bet=${betId}`);
  await dialog.getByText('✓ Verified in your browser: the result matches the record').waitFor({ timeout: 10000 });
  await a.page.keyboard.press('Escape');

  await a.page.setViewportSize({ width: 360, height: 780 });
  await a.page.waitForTimeout(200);
  const width = await a.page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 360, `/bets overflows at 360 px (${width})`);
  await snap(a.page, 'bets-360');
  noErrors(a.errors, 'A');
  await a.context.close();
});

test('a drained player claims the daily top-up', async () => {
  assert.ok(admin.user && admin.password, 'E2E_ADMIN_USER and E2E_ADMIN_PASSWORD are required');
  const carol = await player('carol');
  const login = await api('POST', '/api/auth/login', {
    username: admin.user,
    password: admin.password,
    turnstileToken: 'XXXX.DUMMY.TOKEN.XXXX',
  });
  assert.equal(login.status, 200);
  const drain = await api('PATCH', `/api/auth/users/${carol.id}/balance`, { amount: -999.95 }, login.json.token);
  assert.equal(drain.status, 200, JSON.stringify(drain.json));

  const c = await browserFor(carol.username, '/games/dice');
  await c.page.getByTestId('balance').filter({ hasText: '$0.05' }).waitFor();
  const offer = c.page.getByRole('region', { name: 'Daily top-up' });
  await offer.getByRole('button', { name: 'Claim $100.00' }).click();
  await c.page.getByTestId('balance').filter({ hasText: '$100.05' }).waitFor();
  await offer.waitFor({ state: 'detached' });
  const me = await api('GET', '/api/auth/user', undefined, carol.token);
  assert.equal(me.json.user.balance, 100.05);

  // Drained again the same day: the offer says when the next one comes, and a claim is refused.
  assert.equal(
    (await api('PATCH', `/api/auth/users/${carol.id}/balance`, { amount: -100 }, login.json.token)).status,
    200,
  );
  await c.page.reload();
  await offer.getByText(/next daily top-up of \$100\.00 is available in (23 h 59 min|24 h 0 min)/).waitFor();
  assert.equal(await offer.getByRole('button').count(), 0);
  const again = await api('POST', '/api/wallet/top-up', {}, carol.token);
  assert.equal(again.status, 409);
  noErrors(c.errors, 'C');
  await c.context.close();
});

await run('live');
