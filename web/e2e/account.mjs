// End-to-end: accounts, settings and the admin dashboard against the real
// server (Postgres, Redis) in Debian's Chromium. Needs E2E_ADMIN_USER and
// E2E_ADMIN_PASSWORD of an administrator (hack/e2e.sh creates one).
import assert from 'node:assert/strict';
import { api, newPage, registerUser, run, signIn, snap, test } from './harness.mjs';

const admin = { user: process.env.E2E_ADMIN_USER, password: process.env.E2E_ADMIN_PASSWORD };
const run36 = Date.now().toString(36).slice(-5);
const name = (s) => `${s}_${run36}`.slice(0, 20);

async function headerBalance(page) {
  return (await page.getByTestId('balance').textContent())?.trim();
}

test('register, see the balance, sign out and sign in', async () => {
  const { context, page, errors } = await newPage();
  const user = name('e2e_reg');
  await page.goto('/');
  await snap(page, 'home');
  await page.getByRole('button', { name: 'Register' }).click();
  const dialog = page.getByRole('dialog', { name: 'Register' });
  await dialog.getByLabel('Username').fill(user);
  await dialog.getByLabel('Email').fill(`${user}@example.com`);
  await dialog.getByLabel('Password', { exact: true }).fill('Passw0rd!');
  await dialog.getByLabel('Confirm Password').fill('Passw0rd!');
  await dialog.getByLabel('I am not a robot (development check)').check();
  await snap(page, 'register-dialog');
  await dialog.getByRole('button', { name: 'Register' }).click();
  await dialog.waitFor({ state: 'detached' });
  assert.equal(await headerBalance(page), '$1,000.00');
  await page.getByRole('button', { name: 'Log Out' }).click();
  await page.getByRole('button', { name: 'Sign In' }).waitFor();
  await signIn(page, user, 'Passw0rd!');
  assert.equal(await headerBalance(page), '$1,000.00');
  await snap(page, 'signed-in');
  assert.deepEqual(errors, []);
  await context.close();
});

test('tokens stay in memory, survive a reload, belong to one tab; logging out logs every tab out', async () => {
  const user = name('e2e_tok');
  await registerUser(user);
  const { context, page, errors } = await newPage();
  await page.goto('/');
  await signIn(page, user, 'Passw0rd!');
  const stored = (p) =>
    p.evaluate(() =>
      ['fairplay.token', 'fairplay.refreshToken'].flatMap((k) => [localStorage.getItem(k), sessionStorage.getItem(k)]),
    );
  assert.deepEqual(await stored(page), [null, null, null, null], 'no token in web storage while the page is shown');
  await page.reload();
  await page.getByText(user, { exact: true }).first().waitFor();
  assert.deepEqual(await stored(page), [null, null, null, null], 'nor after a reload');
  // A second tab of the same browser starts signed out and signs in on its own.
  const second = await context.newPage();
  await second.goto('/');
  await second.getByRole('button', { name: 'Sign In' }).waitFor();
  await signIn(second, user, 'Passw0rd!');
  // Logging out in the first tab logs the second one out too.
  await page.getByRole('button', { name: 'Log Out' }).click();
  await page.getByRole('button', { name: 'Sign In' }).waitFor();
  await second.getByRole('button', { name: 'Sign In' }).waitFor({ timeout: 10_000 });
  assert.deepEqual(errors, []);
  await context.close();
});

test('change password logs out after 3 s and the new password works', async () => {
  const user = name('e2e_pw');
  await registerUser(user);
  const { context, page, errors } = await newPage();
  await page.goto('/');
  await signIn(page, user, 'Passw0rd!');
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('tab', { name: 'Security & Sessions' }).click();
  await page.getByLabel('Current Password').fill('Passw0rd!');
  await page.getByLabel('New Password', { exact: true }).fill('weak');
  await page.getByLabel('Confirm New Password').fill('weak');
  await page.getByRole('button', { name: 'Change Password' }).click();
  await page.getByText('Password must be at least 6 characters long').waitFor();
  await page.getByLabel('New Password', { exact: true }).fill('N3w!Passw0rd');
  await page.getByLabel('Confirm New Password').fill('N3w!Passw0rd');
  await snap(page, 'settings-security');
  await page.getByRole('button', { name: 'Change Password' }).click();
  await page.getByText('Password changed successfully. You will be logged out in a few seconds.').waitFor();
  await page.getByRole('button', { name: 'Sign In' }).waitFor({ timeout: 10_000 });
  await signIn(page, user, 'N3w!Passw0rd');
  const old = await api('POST', '/api/auth/login', {
    username: user,
    password: 'Passw0rd!',
    turnstileToken: 'XXXX.DUMMY.TOKEN.XXXX',
  });
  assert.equal(old.status, 401);
  assert.deepEqual(errors, []);
  await context.close();
});

test('revoking another session signs that browser out', async () => {
  const user = name('e2e_rev');
  await registerUser(user);
  const a = await newPage();
  const phone =
    'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';
  const b = await newPage({ width: 360, height: 740 }, phone);
  await a.page.goto('/');
  await signIn(a.page, user, 'Passw0rd!');
  await b.page.goto('/');
  await signIn(b.page, user, 'Passw0rd!');
  await a.page.getByRole('link', { name: 'Settings' }).click();
  await a.page.getByRole('tab', { name: 'Security & Sessions' }).click();
  await a.page.getByRole('button', { name: 'Refresh' }).click();
  await a.page.getByRole('button', { name: 'Revoke All Other Sessions' }).waitFor();
  await a.page.getByRole('img', { name: 'Mobile device' }).waitFor();
  await snap(a.page, 'sessions');
  // Revoke the phone's session (the second browser context).
  const revokePhone = a.page.getByRole('button', { name: /^Revoke .*Android.* session$/ });
  await revokePhone.click();
  await revokePhone.waitFor({ state: 'detached' });
  // The other browser's next call is refused and it ends up signed out.
  await b.page.reload();
  await b.page.getByRole('button', { name: 'Sign In' }).waitFor({ timeout: 10_000 });
  await snap(b.page, 'revoked-browser-360');
  assert.equal(await a.page.getByText(user, { exact: true }).first().isVisible(), true);
  assert.deepEqual(a.errors, []);
  await a.context.close();
  await b.context.close();
});

test('admin searches, pages, adjusts a balance and deletes a user', async () => {
  assert.ok(admin.user && admin.password, 'E2E_ADMIN_USER and E2E_ADMIN_PASSWORD are required');
  const prefix = `adm${run36}`;
  for (let i = 0; i < 12; i += 1) await registerUser(`${prefix}_${String(i).padStart(2, '0')}`);
  const victim = `${prefix}_00`;
  const { context, page, errors } = await newPage();
  await page.goto('/');
  await signIn(page, admin.user, admin.password);
  await page.getByRole('link', { name: 'Admin' }).click();
  await page.getByRole('heading', { name: 'Admin Dashboard' }).waitFor();
  await page.getByText('Total Users').first().waitFor();
  await page.getByText(/^Page 1 of \d+$/).waitFor();
  await page.getByRole('button', { name: 'Next' }).click();
  await page.getByText(/^Page 2 of \d+$/).waitFor();
  await snap(page, 'admin-page-2');

  await page.getByPlaceholder('Search by username or email').fill(prefix);
  await page.getByText('Search results: Page 1 of 2').waitFor();
  await page.getByRole('button', { name: 'Next' }).click();
  await page.getByText('Search results: Page 2 of 2').waitFor();
  await page.getByRole('button', { name: 'Previous' }).click();
  await page.getByText('Search results: Page 1 of 2').waitFor();
  await snap(page, 'admin-search');

  await page.getByPlaceholder('Search by username or email').fill(victim);
  await page.getByText('Search results: Page 1 of 1').waitFor();
  await page.getByRole('button', { name: `Manage ${victim}` }).click();
  const dialog = page.getByRole('dialog', { name: 'Manage User' });
  await dialog.getByLabel('Amount to Add/Remove').fill('5.5');
  await snap(page, 'admin-manage');
  await dialog.getByRole('button', { name: 'Update Balance' }).click();
  await page.getByText(`Successfully updated ${victim}'s balance`).waitFor();
  const login = await api('POST', '/api/auth/login', {
    username: victim,
    password: 'Passw0rd!',
    turnstileToken: 'XXXX.DUMMY.TOKEN.XXXX',
  });
  assert.equal(login.json.user.balance, 1005.5);

  if (!(await dialog.isVisible())) await page.getByRole('button', { name: `Manage ${victim}` }).click();
  await dialog.getByRole('button', { name: 'Delete User' }).click();
  await dialog.getByText(`Are you sure you want to delete user "${victim}"? This action cannot be undone.`).waitFor();
  await dialog.getByRole('button', { name: 'Yes, Delete' }).click();
  await page.getByText(`Successfully deleted user ${victim}`).waitFor();
  await page.getByText('No users found matching your search.').waitFor();
  await snap(page, 'admin-deleted');
  const gone = await api('POST', '/api/auth/login', {
    username: victim,
    password: 'Passw0rd!',
    turnstileToken: 'XXXX.DUMMY.TOKEN.XXXX',
  });
  assert.equal(gone.status, 401);
  const me = await api('GET', '/api/auth/user', undefined, login.json.token);
  assert.equal(me.status, 401, 'the deleted user’s token is refused');

  await page.getByRole('button', { name: 'Clear search and show all users' }).click();
  await page.getByText(/^Page 1 of \d+$/).waitFor();
  assert.deepEqual(errors, []);
  await context.close();
});

await run('account');
