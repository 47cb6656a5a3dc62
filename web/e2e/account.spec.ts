// Accounts, settings and the admin dashboard against the real server
// (Postgres, Redis) in Debian's Chromium.
import type { BrowserContext } from '@playwright/test';
import { api, expect, login, PASSWORD, registerUser, signIn, test, uniqueName, type Page } from './fixtures';

test('register, see the balance, sign out and sign in', async ({ page, snap }) => {
  const user = uniqueName('e2e_reg');
  await page.goto('/');
  await snap(page, 'home');
  await page.getByRole('button', { name: 'Register' }).click();
  const dialog = page.getByRole('dialog', { name: 'Register' });
  await dialog.getByLabel('Username').fill(user);
  await dialog.getByLabel('Email').fill(`${user}@example.com`);
  await dialog.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await dialog.getByLabel('Confirm Password').fill(PASSWORD);
  await dialog.getByLabel('I am not a robot (development check)').check();
  await snap(page, 'register-dialog');
  await dialog.getByRole('button', { name: 'Register' }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId('balance')).toHaveText('$1,000.00');
  await page.getByRole('button', { name: 'Log Out' }).click();
  await expect(page.getByRole('button', { name: 'Sign In' })).toBeVisible();
  await signIn(page, user, PASSWORD);
  await expect(page.getByTestId('balance')).toHaveText('$1,000.00');
  await snap(page, 'signed-in');
});

/** readable is everything a script in the page can read of the session: cookies and web storage. */
function readable(page: Page) {
  return page.evaluate(() =>
    [
      document.cookie,
      ...[localStorage, sessionStorage].flatMap((store) =>
        Object.keys(store).map((key) => `${key}=${store.getItem(key) ?? ''}`),
      ),
    ].join('\n'),
  );
}

/** sessionCookie is the browser's session cookie (Playwright sees HttpOnly cookies). */
async function sessionCookie(context: BrowserContext) {
  const cookie = (await context.cookies()).find((c) => c.name === 'fairplay_session');
  if (!cookie) throw new Error('no session cookie');
  return cookie;
}

test('the refresh token stays in an HttpOnly cookie: a reload and the other tabs are signed in; logging out logs every tab out', async ({
  page,
  context,
  player,
}) => {
  await page.goto('/');
  await signIn(page, player.username, player.password);
  const cookie = await sessionCookie(context);
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
  // A synthetic pagehide (as an injected script could fire) parks nothing.
  await page.evaluate(() => window.dispatchEvent(new PageTransitionEvent('pagehide')));
  const seen = await readable(page);
  expect(seen, 'no refresh token where a script can read it').not.toContain(cookie.value);
  expect(seen).not.toMatch(/fairplay\.(refreshToken|token)=/);
  expect(seen, 'only the hint that there is a session').toContain('fairplay_signed_in=1');

  await page.reload();
  await expect(page.getByText(player.username, { exact: true }).first()).toBeVisible();
  expect(await readable(page), 'nor after a reload').not.toContain((await sessionCookie(context)).value);
  // A second tab of the same browser shares the session (on a 360 px phone's width).
  const second = await context.newPage();
  await second.setViewportSize({ width: 360, height: 740 });
  await second.goto('/');
  // On a phone the player's name is the account menu's button.
  await expect(second.getByRole('button', { name: new RegExp(`^${player.username}\\b.*account menu$`) })).toBeVisible();
  await expect(second.getByTestId('balance')).toHaveText('$1,000.00');
  // Logging out in the first tab logs the second one out too, and ends the cookies.
  await page.getByRole('button', { name: 'Log Out' }).click();
  await expect(page.getByRole('button', { name: 'Sign In' })).toBeVisible();
  await expect(second.getByRole('button', { name: 'Sign In' })).toBeVisible();
  expect((await context.cookies()).map((c) => c.name)).not.toContain('fairplay_session');
  // Signing in in one tab signs the other one in.
  await signIn(second, player.username, player.password);
  await expect(page.getByText(player.username, { exact: true }).first()).toBeVisible();
  await page.reload();
  await expect(page.getByText(player.username, { exact: true }).first()).toBeVisible();
});

test('a script in the page that calls refresh itself gets no refresh token', async ({
  signedInPage: page,
  context,
}) => {
  for (const cookieHeader of [false, true]) {
    const answer = await page.evaluate(async (withHeader) => {
      const csrf = document.cookie
        .split('; ')
        .find((c) => c.startsWith('fairplay_csrf='))
        ?.slice('fairplay_csrf='.length);
      const headers: Record<string, string> = {
        'Content-Type': 'application/json',
        'X-CSRF-Token': decodeURIComponent(csrf ?? ''),
      };
      if (withHeader) headers['X-Fairplay-Refresh-Cookie'] = '1';
      const res = await fetch('/api/auth/refresh', { method: 'POST', headers, body: '{}' });
      return { status: res.status, body: (await res.json()) as { token?: string; refreshToken?: string } };
    }, cookieHeader);
    expect(answer.status, `refresh ${cookieHeader ? 'with' : 'without'} the header`).toBe(200);
    expect(answer.body.token, 'an access token: the script can use the session while the page is open').toBeTruthy();
    expect(answer.body.refreshToken ?? '', 'but cannot carry the session away').toBe('');
    expect(JSON.stringify(answer.body)).not.toContain((await sessionCookie(context)).value);
  }
  // The session goes on (the refreshes rotated the cookie, as the app's own do).
  await page.reload();
  await expect(page.getByRole('button', { name: 'Log Out' })).toBeVisible();
});

test('change password logs out after 3 s and the new password works', async ({ signedInPage: page, player, snap }) => {
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('tab', { name: 'Security & Sessions' }).click();
  await page.getByLabel('Current Password').fill(player.password);
  await page.getByLabel('New Password', { exact: true }).fill('weak');
  await page.getByLabel('Confirm New Password').fill('weak');
  await page.getByRole('button', { name: 'Change Password' }).click();
  await expect(page.getByText('Password must be at least 6 characters long')).toBeVisible();
  await page.getByLabel('New Password', { exact: true }).fill('N3w!Passw0rd');
  await page.getByLabel('Confirm New Password').fill('N3w!Passw0rd');
  await snap(page, 'settings-security');
  await page.getByRole('button', { name: 'Change Password' }).click();
  await expect(page.getByText('Password changed successfully. You will be logged out in a few seconds.')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Sign In' })).toBeVisible();
  await signIn(page, player.username, 'N3w!Passw0rd');
  expect((await login(player.username, player.password)).status).toBe(401);
});

test('revoking another session signs that browser out', async ({ signedInPage: a, player, newSession, snap }) => {
  const phone =
    'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';
  const { page: b } = await newSession({ viewport: { width: 360, height: 740 }, userAgent: phone });
  await b.goto('/');
  await signIn(b, player.username, player.password);
  await a.getByRole('link', { name: 'Settings' }).click();
  await a.getByRole('tab', { name: 'Security & Sessions' }).click();
  await a.getByRole('button', { name: 'Refresh' }).click();
  await expect(a.getByRole('button', { name: 'Revoke All Other Sessions' })).toBeVisible();
  await expect(a.getByRole('img', { name: 'Mobile device' })).toBeVisible();
  await snap(a, 'sessions');
  // Revoke the phone's session (the second browser context).
  const revokePhone = a.getByRole('button', { name: /^Revoke .*Android.* session$/ });
  await revokePhone.click();
  await expect(revokePhone).toHaveCount(0);
  // The other browser's next call is refused and it ends up signed out.
  await b.reload();
  await expect(b.getByRole('button', { name: 'Sign In' })).toBeVisible();
  await snap(b, 'revoked-browser-360');
  await expect(a.getByText(player.username, { exact: true }).first()).toBeVisible();
});

test('admin searches, pages, adjusts a balance and deletes a user', async ({ page, admin, snap }) => {
  const prefix = uniqueName('adm').replace('_', '').slice(0, 12);
  for (let i = 0; i < 12; i += 1) await registerUser(`${prefix}_${String(i).padStart(2, '0')}`);
  const victim = `${prefix}_00`;
  await page.goto('/');
  await signIn(page, admin.user, admin.password);
  await page.getByRole('link', { name: 'Admin' }).click();
  await expect(page.getByRole('heading', { name: 'Admin Dashboard' })).toBeVisible();
  await expect(page.getByText('Total Users').first()).toBeVisible();
  await expect(page.getByText(/^Page 1 of \d+$/)).toBeVisible();
  await page.getByRole('button', { name: 'Next' }).click();
  await expect(page.getByText(/^Page 2 of \d+$/)).toBeVisible();
  await snap(page, 'admin-page-2');

  await page.getByPlaceholder('Search by username or email').fill(prefix);
  await expect(page.getByText('Search results: Page 1 of 2')).toBeVisible();
  await page.getByRole('button', { name: 'Next' }).click();
  await expect(page.getByText('Search results: Page 2 of 2')).toBeVisible();
  await page.getByRole('button', { name: 'Previous' }).click();
  await expect(page.getByText('Search results: Page 1 of 2')).toBeVisible();
  await snap(page, 'admin-search');

  await page.getByPlaceholder('Search by username or email').fill(victim);
  await expect(page.getByText('Search results: Page 1 of 1')).toBeVisible();
  await page.getByRole('button', { name: `Manage ${victim}` }).click();
  const dialog = page.getByRole('dialog', { name: 'Manage User' });
  await dialog.getByLabel('Amount to Add/Remove').fill('5.5');
  await snap(page, 'admin-manage');
  await dialog.getByRole('button', { name: 'Update Balance' }).click();
  await expect(page.getByText(`Successfully updated ${victim}'s balance`)).toBeVisible();
  const signedIn = await login(victim, PASSWORD);
  expect(signedIn.json?.user.balance).toBe(1005.5);

  if (!(await dialog.isVisible())) await page.getByRole('button', { name: `Manage ${victim}` }).click();
  await dialog.getByRole('button', { name: 'Delete User' }).click();
  await expect(
    dialog.getByText(`Are you sure you want to delete user "${victim}"? This action cannot be undone.`),
  ).toBeVisible();
  await dialog.getByRole('button', { name: 'Yes, Delete' }).click();
  await expect(page.getByText(`Successfully deleted user ${victim}`)).toBeVisible();
  await expect(page.getByText('No users found matching your search.')).toBeVisible();
  await snap(page, 'admin-deleted');
  expect((await login(victim, PASSWORD)).status).toBe(401);
  const me = await api('GET', '/api/auth/user', undefined, signedIn.json?.token);
  expect(me.status, 'the deleted user’s token is refused').toBe(401);

  await page.getByRole('button', { name: 'Clear search and show all users' }).click();
  await expect(page.getByText(/^Page 1 of \d+$/)).toBeVisible();
});
