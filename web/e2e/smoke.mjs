// End-to-end smoke test against a running server: register, sign out, sign in,
// all under the server's Content-Security-Policy, which must report no
// violation; then a check that the policy lets Cloudflare Turnstile's script
// and frame in and keeps inline and foreign scripts out.
// Usage: E2E_BASE_URL=http://127.0.0.1:8080 npm run e2e
// Needs Chromium at /usr/bin/chromium (or CHROMIUM_PATH) and a server in
// development bot-check mode (no TURNSTILE_SECRET_KEY).
// Set E2E_SCREENSHOTS=dir to save screenshots of each step.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { chromium } from 'playwright-core';
import { watchCSP } from './csp.mjs';

const baseURL = process.env.E2E_BASE_URL;
if (!baseURL) {
  console.error('E2E_BASE_URL is required, e.g. E2E_BASE_URL=http://127.0.0.1:8080');
  process.exit(2);
}
const shots = process.env.E2E_SCREENSHOTS;
if (shots) await mkdir(shots, { recursive: true });

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

const username = `e2e_${Date.now().toString(36)}`.slice(0, 20);
const password = 'Sm0ke!test';
let step = 0;

/**
 * headerEntry follows one of the signed-in header's entries: a link or button
 * beside the balance on wide screens, an item of the account menu on narrow ones.
 * @param {import('playwright-core').Page} page @param {string} name
 */
async function headerEntry(page, name) {
  const menu = page.getByRole('button', { name: /, account menu$/ });
  if (await menu.isVisible()) {
    await menu.click();
    await page.getByRole('menuitem', { name }).click();
  } else {
    await page
      .getByRole('banner')
      .getByRole(name === 'Log Out' ? 'button' : 'link', { name })
      .click();
  }
}

/** @param {import('playwright-core').Page} page @param {string} name */
async function snap(page, name) {
  step += 1;
  if (shots) await page.screenshot({ path: `${shots}/${String(step).padStart(2, '0')}-${name}.png`, fullPage: true });
}

try {
  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 360, height: 740 },
  ]) {
    const context = await browser.newContext({ baseURL, viewport });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (err) => errors.push(err.message));
    const violations = [];
    await watchCSP(context, page, violations);
    const tag = `${viewport.width}px`;
    const user = viewport.width === 1280 ? username : `${username.slice(0, 16)}_m`;

    const home = await page.goto('/');
    // The app runs under the server's policy (so a violation below is real).
    const policy = home?.headers()['content-security-policy'] ?? '';
    assert.match(policy, /script-src 'self' https:\/\/challenges\.cloudflare\.com;/);
    assert.match(policy, /frame-ancestors 'none'/);
    await page.getByRole('heading', { name: 'Fairplay Originals' }).waitFor();
    assert.equal(await page.getByRole('list', { name: 'Fairplay Originals' }).getByRole('link').count(), 6);
    await snap(page, `home-${tag}`);

    // Register.
    await page.getByRole('button', { name: 'Register' }).click();
    const register = page.getByRole('dialog', { name: 'Register' });
    await register.getByLabel('Username').fill(user.toUpperCase());
    assert.equal(await register.getByLabel('Username').inputValue(), user);
    await register.getByLabel('Email').fill(`${user}@example.com`);
    await register.getByLabel('Password', { exact: true }).fill(password);
    await register.getByLabel('Confirm Password').fill(password);
    await register.getByRole('button', { name: 'Register' }).click();
    await register.getByRole('alert').filter({ hasText: 'Please complete the Turnstile verification' }).waitFor();
    await register.getByLabel('I am not a robot (development check)').check();
    await snap(page, `register-${tag}`);
    await register.getByRole('button', { name: 'Register' }).click();
    await register.waitFor({ state: 'detached' });
    await page.getByText(user, { exact: true }).filter({ visible: true }).first().waitFor();
    const balance = await page.getByTestId('balance').textContent();
    assert.match(balance ?? '', /^\$[\d,]+\.\d{2}$/);
    await snap(page, `signed-in-${tag}`);

    // Settings shows the account.
    await headerEntry(page, 'Settings');
    await page.getByRole('heading', { name: 'Account Information' }).waitFor();
    await page.getByText('Regular User').waitFor();
    await page.getByRole('tab', { name: 'Security & Sessions' }).click();
    await page.getByRole('heading', { name: 'Active Sessions' }).waitFor();
    await page
      .getByText(/^Last active: .+ ago$/)
      .first()
      .waitFor();
    await snap(page, `settings-${tag}`);

    // Sign out, then sign in again.
    await headerEntry(page, 'Log Out');
    await page.getByText('Please log in to access your settings.').waitFor();
    await page.getByRole('button', { name: 'Go to Home' }).click();
    await page.getByRole('button', { name: 'Sign In' }).click();
    const signIn = page.getByRole('dialog', { name: 'Sign In' });
    await signIn.getByLabel('Username or Email').fill(user);
    await signIn.getByLabel('Password').fill('wrong-password');
    await signIn.getByLabel('I am not a robot (development check)').check();
    await signIn.getByRole('button', { name: 'Sign In' }).click();
    await signIn.getByRole('alert').waitFor();
    // The failed attempt reset the bot check.
    assert.equal(await signIn.getByLabel('I am not a robot (development check)').isChecked(), false);
    await signIn.getByLabel('Password').fill(password);
    await signIn.getByLabel('I am not a robot (development check)').check();
    await signIn.getByRole('button', { name: 'Sign In' }).click();
    await signIn.waitFor({ state: 'detached' });
    await page.getByText(user, { exact: true }).filter({ visible: true }).first().waitFor();

    // Non-admins are sent home from /admin.
    await page.goto('/admin');
    await page.getByRole('heading', { name: 'Fairplay Originals' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/');
    await snap(page, `after-sign-in-${tag}`);

    assert.deepEqual(errors, [], `page errors at ${tag}`);
    assert.deepEqual(violations, [], `CSP violations at ${tag}`);
    await context.close();
    console.log(`ok ${tag}: register → sign out → sign in as ${user}, no CSP violation`);
  }

  // The policy against what it must allow and refuse, in the real browser.
  // Turnstile's origin is answered here (the test machine is offline): the
  // browser applies the CSP before any request, so what matters is whether
  // it lets the request go out.
  {
    const context = await browser.newContext({ baseURL });
    const page = await context.newPage();
    const violations = [];
    await watchCSP(context, page, violations);
    await context.route('https://challenges.cloudflare.com/**', (route) =>
      route.request().resourceType() === 'script'
        ? route.fulfill({ contentType: 'text/javascript', body: 'window.__turnstileLoaded = true;' })
        : route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>turnstile</title>' }),
    );
    await context.route('https://evil.example/**', (route) =>
      route.fulfill({ contentType: 'text/javascript', body: 'window.__evilLoaded = true;' }),
    );
    await page.goto('/');
    await page.getByRole('heading', { name: 'Fairplay Originals' }).waitFor();
    const outcome = await page.evaluate(async () => {
      const load = (el) =>
        new Promise((resolve) => {
          el.addEventListener('load', () => resolve('loaded'));
          el.addEventListener('error', () => resolve('error'));
          setTimeout(() => resolve('timeout'), 5000);
          document.body.appendChild(el);
        });
      const turnstile = document.createElement('script');
      turnstile.src = 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit';
      const frame = document.createElement('iframe');
      frame.src = 'https://challenges.cloudflare.com/cdn-cgi/challenge-platform/turnstile';
      const evil = document.createElement('script');
      evil.src = 'https://evil.example/x.js';
      const inline = document.createElement('script');
      inline.textContent = 'window.__inlineRan = true;';
      document.body.appendChild(inline);
      return {
        turnstile: await load(turnstile),
        frame: await load(frame),
        evil: await load(evil),
        flags: {
          turnstile: window.__turnstileLoaded === true,
          evil: window.__evilLoaded === true,
          inline: window.__inlineRan === true,
        },
      };
    });
    assert.equal(outcome.turnstile, 'loaded', 'Turnstile script blocked');
    assert.equal(outcome.flags.turnstile, true, 'Turnstile script did not run');
    assert.equal(outcome.frame, 'loaded', 'Turnstile frame did not load');
    assert.equal(outcome.flags.evil, false, 'a foreign script ran');
    assert.equal(outcome.flags.inline, false, 'an inline script ran');
    // Exactly the two refusals, both of script-src: no other directive (a
    // frame fires load even when frame-src refuses it) complained.
    const reports = () => violations.filter((v) => !v.startsWith('console:'));
    for (let i = 0; i < 50 && reports().length < 2; i++) await page.waitForTimeout(100); // reports arrive asynchronously
    const refused = reports();
    assert.equal(refused.length, 2, `violations: ${JSON.stringify(violations)}`);
    assert.ok(
      refused.some((v) => v.startsWith('script-src-elem blocked https://evil.example/')),
      JSON.stringify(refused),
    );
    assert.ok(
      refused.some((v) => v.startsWith('script-src-elem blocked inline')),
      JSON.stringify(refused),
    );
    await context.close();
    console.log('ok CSP: Turnstile script and frame allowed; inline and foreign scripts refused');
  }
} finally {
  await browser.close();
}
