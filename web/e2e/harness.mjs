// A small runner for the Playwright end-to-end scripts: launches Debian's
// Chromium through playwright-core, runs named tests in order, saves
// screenshots, and writes a jest-style JSON summary (E2E_RESULTS) that
// `make test` adds to its closing line.
// Environment: E2E_BASE_URL (required), E2E_SCREENSHOTS (dir), E2E_RESULTS (file),
// CHROMIUM_PATH (default /usr/bin/chromium).
import { mkdir, writeFile } from 'node:fs/promises';
import { chromium } from 'playwright-core';
import { watchCSP } from './csp.mjs';

export const baseURL = process.env.E2E_BASE_URL;
if (!baseURL) {
  console.error('E2E_BASE_URL is required, e.g. E2E_BASE_URL=http://127.0.0.1:8080');
  process.exit(2);
}
const shots = process.env.E2E_SCREENSHOTS;
if (shots) await mkdir(shots, { recursive: true });

export const browser = await chromium.launch({
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

const tests = [];
/** Registers a test. @param {string} name @param {() => Promise<void>} fn */
export function test(name, fn) {
  tests.push({ name, fn });
}

/** Saves a full-page screenshot when E2E_SCREENSHOTS is set. @param {import('playwright-core').Page} page @param {string} name */
export async function snap(page, name) {
  if (shots) await page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
}

/** A new browser context (one "browser profile") on the server; errors collects page errors and CSP violations. */
export async function newPage(viewport = { width: 1280, height: 800 }, userAgent = undefined) {
  const context = await browser.newContext({ baseURL, viewport, ...(userAgent ? { userAgent } : {}) });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await watchCSP(context, page, errors);
  return { context, page, errors };
}

/** Calls the JSON API like the web app does (CSRF cookie + header, bearer token). */
export async function api(method, path, body, token) {
  const csrf = await fetch(`${baseURL}/api/csrf`);
  const cookie = (csrf.headers.get('set-cookie') ?? '').split(';')[0];
  const { csrfToken } = await csrf.json();
  const res = await fetch(`${baseURL}${path}`, {
    method,
    headers: {
      'Content-Type': 'application/json',
      Cookie: cookie,
      'X-CSRF-Token': csrfToken,
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, json };
}

export const botToken = 'XXXX.DUMMY.TOKEN.XXXX';

/** Registers a user through the API and returns its tokens. */
export async function registerUser(username, password = 'Passw0rd!') {
  const res = await api('POST', '/api/auth/register', {
    username,
    email: `${username}@example.com`,
    password,
    turnstileToken: botToken,
  });
  if (res.status !== 200) throw new Error(`register ${username}: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

/** Signs in through the Sign In dialog. @param {import('playwright-core').Page} page */
export async function signIn(page, username, password) {
  await page.getByRole('button', { name: 'Sign In' }).click();
  const dialog = page.getByRole('dialog', { name: 'Sign In' });
  await dialog.getByLabel('Username or Email').fill(username);
  await dialog.getByLabel('Password').fill(password);
  await dialog.getByLabel('I am not a robot (development check)').check();
  await dialog.getByRole('button', { name: 'Sign In' }).click();
  await dialog.waitFor({ state: 'detached' });
  // The header shows the username: beside the balance on wide screens, on the account menu's button on narrow ones.
  await page.getByText(username, { exact: true }).filter({ visible: true }).first().waitFor();
}

/** Runs the registered tests and exits non-zero if any failed. */
export async function run(suite) {
  const started = Date.now();
  let passed = 0;
  let failed = 0;
  for (const t of tests) {
    const t0 = Date.now();
    try {
      await t.fn();
      passed += 1;
      console.log(`ok   ${suite}: ${t.name} (${Date.now() - t0} ms)`);
    } catch (err) {
      failed += 1;
      console.log(`FAIL ${suite}: ${t.name} (${Date.now() - t0} ms)\n${err?.stack ?? err}`);
    }
  }
  await browser.close();
  const seconds = (Date.now() - started) / 1000;
  console.log(`${suite}: ${passed} passed, ${failed} failed in ${seconds.toFixed(1)} s`);
  if (process.env.E2E_RESULTS) {
    await writeFile(
      process.env.E2E_RESULTS,
      JSON.stringify({ numPassedTests: passed, numFailedTests: failed, numPendingTests: 0, seconds }),
    );
  }
  process.exit(failed ? 1 : 0);
}
