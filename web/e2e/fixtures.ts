// Fixtures shared by the end-to-end specs.
//  - guard (automatic): every page of every context the test opens reports
//    page errors, Content-Security-Policy violations (the
//    securitypolicyviolation event of every document) and console errors;
//    the test fails if any was seen.
//  - newSession: another browser profile (context + page), guarded the same way.
//  - player: a freshly registered player (through the API) with its own token.
//  - signedInPage: the built-in page with that player signed in.
//  - admin: the administrator hack/e2e.sh created (E2E_ADMIN_USER, E2E_ADMIN_PASSWORD).
//  - snap: a documentation screenshot into test/artifacts/e2e/<suite>/<name>.png.
import { mkdir } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  test as base,
  expect,
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type Page,
} from '@playwright/test';

export { expect };
export type { Page };

export const baseURL = process.env.E2E_BASE_URL ?? '';
export const botToken = 'XXXX.DUMMY.TOKEN.XXXX';
export const PASSWORD = 'Passw0rd!';
export const artifacts = fileURLToPath(new URL('../../test/artifacts/e2e/', import.meta.url));

declare global {
  interface Window {
    __fairplayCSPViolation?: (v: string) => void;
  }
}

/**
 * guardContext adds to problems every page error, every CSP violation of the
 * context's documents ("<directive> blocked <uri> in <file>:<line>") and every
 * console error ("console: <text>") of its pages. A refused request (4xx/5xx)
 * logs "Failed to load resource" in Chromium: the tests provoke those on
 * purpose (a wrong password, a revoked session), so only that message is let through.
 */
export async function guardContext(context: BrowserContext, problems: string[]) {
  await context.exposeFunction('__fairplayCSPViolation', (v: string) => problems.push(v));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__fairplayCSPViolation?.(
        `${e.effectiveDirective} blocked ${e.blockedURI || '(inline)'} in ${e.sourceFile}:${e.lineNumber}`,
      );
    });
  });
  const watch = (page: Page) => {
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() !== 'error') return;
      if (/^Failed to load resource: the server responded with a status of [45]\d\d/.test(msg.text())) return;
      problems.push(`console: ${msg.text()}`);
    });
  };
  context.pages().forEach(watch);
  context.on('page', watch);
}

export interface Session {
  context: BrowserContext;
  page: Page;
}

export interface Player {
  username: string;
  password: string;
  token: string;
  id: string;
}

interface AuthResponse {
  token: string;
  user: { _id: string; balance: number; hideUsername?: boolean };
}

/** api calls the JSON API like the web app does (CSRF cookie + header, bearer token). */
export async function api(method: string, path: string, body?: unknown, token?: string) {
  const csrf = await fetch(`${baseURL}/api/csrf`);
  const cookie = (csrf.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
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
  // The auth routes' answer; other routes' bodies are only printed.
  let json: AuthResponse | null = null;
  try {
    json = JSON.parse(text) as AuthResponse;
  } catch {
    // not JSON
  }
  return { status: res.status, json };
}

/** login signs in through the API (another device of the same player). */
export function login(username: string, password: string) {
  return api('POST', '/api/auth/login', { username, password, turnstileToken: botToken });
}

/** uniqueName is a fresh username of at most 20 characters starting with prefix. */
export function uniqueName(prefix: string) {
  return `${prefix}_${Date.now().toString(36).slice(-5)}${Math.floor(Math.random() * 1e4)}`.slice(0, 20);
}

/** registerUser registers username through the API and returns its tokens. */
export async function registerUser(username: string, password = PASSWORD): Promise<Player> {
  const res = await api('POST', '/api/auth/register', {
    username,
    email: `${username}@example.com`,
    password,
    turnstileToken: botToken,
  });
  expect(res.status, `register ${username}: ${JSON.stringify(res.json)}`).toBe(200);
  if (!res.json) throw new Error(`register ${username}: no JSON answer`);
  return { username, password, token: res.json.token, id: res.json.user._id };
}

/** signIn signs in through the Sign In dialog and waits for the header to show the username. */
export async function signIn(page: Page, username: string, password: string) {
  await page.getByRole('button', { name: 'Sign In' }).click();
  const dialog = page.getByRole('dialog', { name: 'Sign In' });
  await dialog.getByLabel('Username or Email').fill(username);
  await dialog.getByLabel('Password').fill(password);
  await dialog.getByLabel('I am not a robot (development check)').check();
  await dialog.getByRole('button', { name: 'Sign In' }).click();
  await expect(dialog).toBeHidden();
  // The header shows the username: beside the balance on wide screens, on the account menu's button on narrow ones.
  await expect(page.getByText(username, { exact: true }).filter({ visible: true }).first()).toBeVisible();
}

/** figure prints a measured figure and keeps it on the test's report as an annotation. */
export function figure(type: string, description: string) {
  console.log(`     ${type}: ${description}`);
  base.info().annotations.push({ type, description });
}

interface Fixtures {
  problems: string[];
  guard: undefined;
  newSession: (options?: BrowserContextOptions & { guard?: boolean }) => Promise<Session>;
  player: Player;
  signedInPage: Page;
  admin: { user: string; password: string };
  snap: (page: Page, name: string, options?: { fullPage?: boolean }) => Promise<void>;
}

async function openSession(browser: Browser, problems: string[], options: BrowserContextOptions & { guard?: boolean }) {
  const { guard = true, ...contextOptions } = options;
  const context = await browser.newContext({ baseURL, ...contextOptions });
  if (guard) {
    await guardContext(context, problems);
  } else {
    // Without the CSP watch (a context that bypasses the CSP to inject axe), page errors still count.
    context.on('page', (page) => page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`)));
  }
  const page = await context.newPage();
  return { context, page };
}

export const test = base.extend<Fixtures>({
  problems: async ({}, use) => {
    await use([]);
  },
  // The built-in context is guarded too; guard fails the test on anything the guarded pages reported.
  context: async ({ context, problems }, use) => {
    await guardContext(context, problems);
    await use(context);
  },
  guard: [
    async ({ problems }, use) => {
      await use(undefined);
      expect(problems, 'page errors, CSP violations or console errors').toEqual([]);
    },
    { auto: true },
  ],
  newSession: async ({ browser, problems }, use) => {
    const contexts: BrowserContext[] = [];
    await use(async (options = {}) => {
      const session = await openSession(browser, problems, options);
      contexts.push(session.context);
      return session;
    });
    for (const c of contexts) await c.close();
  },
  player: async ({}, use, testInfo) => {
    // Usernames are [a-z0-9_]: a spec named two-factor gives "twofac".
    const prefix = basename(testInfo.file, '.spec.ts')
      .replace(/[^a-z0-9_]/g, '')
      .slice(0, 6);
    await use(await registerUser(uniqueName(`e2e${prefix}`)));
  },
  signedInPage: async ({ page, player }, use) => {
    await page.goto('/');
    await signIn(page, player.username, player.password);
    await use(page);
  },
  admin: async ({}, use) => {
    const user = process.env.E2E_ADMIN_USER;
    const password = process.env.E2E_ADMIN_PASSWORD;
    if (!user || !password)
      throw new Error('E2E_ADMIN_USER and E2E_ADMIN_PASSWORD are required (hack/e2e.sh sets them)');
    await use({ user, password });
  },
  snap: async ({}, use, testInfo) => {
    const dir = `${artifacts}${basename(testInfo.file, '.spec.ts')}`;
    await use(async (page, name, options = { fullPage: true }) => {
      const path = `${dir}/${name}.png`;
      await mkdir(dirname(path), { recursive: true });
      await page.screenshot({ path, fullPage: options.fullPage ?? true });
    });
  },
});
