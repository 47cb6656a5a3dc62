// Two-factor sign-in in the browser against the real server: set it up from
// Settings on a 360 px phone (QR code drawn inline under the CSP), sign in
// with a code from the "app" (computed here, RFC 6238), with a recovery
// code, and turn it off.
import { createHmac } from 'node:crypto';
import { expect, test } from './fixtures';

/** totp is the code an authenticator app shows for a base32 key at time t. */
function totp(secret: string, t = Date.now()): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const ch of secret.replace(/\s+/g, '').toUpperCase()) bits += alphabet.indexOf(ch).toString(2).padStart(5, '0');
  const key = Buffer.from((bits.match(/.{8}/g) ?? []).map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(t / 1000 / 30)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const off = (mac[mac.length - 1] ?? 0) & 0x0f;
  return String((mac.readUInt32BE(off) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

test.use({ viewport: { width: 360, height: 780 } });

test('turn on two-factor sign-in, sign in with a code and a recovery code, turn it off', async ({
  signedInPage: page,
  player,
  newSession,
  snap,
}) => {
  await page.goto('/settings?tab=security');
  const panel = page.locator('section', { has: page.getByRole('heading', { name: 'Two-Factor Authentication' }) });
  await panel.getByRole('button', { name: 'Turn On' }).click();
  await expect(panel.getByRole('img', { name: 'QR code for your authenticator app' })).toBeVisible();
  const secret = (await panel.locator('code').first().textContent()) ?? '';
  expect(secret.replace(/\s/g, '')).toMatch(/^[A-Z2-7]{32}$/);
  expect(
    await page.evaluate(() => document.documentElement.scrollWidth),
    'no horizontal scroll at 360 px',
  ).toBeLessThanOrEqual(360);
  await snap(page, 'two-factor-setup-360');

  await panel.getByLabel('Code from the app').fill('000000');
  await panel.getByLabel('Current password').fill(player.password);
  await panel.getByRole('button', { name: 'Confirm' }).click();
  await expect(panel.getByRole('alert')).toHaveText('Invalid two-factor code');
  // The code of the current step confirms it; sign-in then needs a later one.
  await panel.getByLabel('Code from the app').fill(totp(secret));
  await panel.getByRole('button', { name: 'Confirm' }).click();
  const codes = panel.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem');
  await expect(codes).toHaveCount(10);
  const [recovery = '', another = ''] = await codes.allTextContents();
  await panel.getByRole('button', { name: 'I saved them' }).click();
  await expect(panel.getByText('10 recovery codes left.')).toBeVisible();

  // Another device: the password alone is not enough.
  const signInWith = async (code: string) => {
    const { page: other } = await newSession({ viewport: { width: 360, height: 780 } });
    await other.goto('/');
    await other.getByRole('button', { name: 'Sign In' }).click();
    const dialog = other.getByRole('dialog', { name: 'Sign In' });
    await dialog.getByLabel('Username or Email').fill(player.username);
    await dialog.getByLabel('Password').fill(player.password);
    await dialog.getByLabel('I am not a robot (development check)').check();
    await dialog.getByRole('button', { name: 'Sign In' }).click();
    await expect(dialog.getByLabel('Two-factor code')).toBeVisible();
    await dialog.getByLabel('Two-factor code').fill(code);
    await dialog.getByLabel('I am not a robot (development check)').check();
    await dialog.getByRole('button', { name: 'Sign In' }).click();
    await expect(dialog).toBeHidden();
    await expect(other.getByText(player.username, { exact: true }).filter({ visible: true }).first()).toBeVisible();
  };
  await signInWith(totp(secret, Date.now() + 30_000)); // the next step: within the server's window
  await signInWith(recovery.toUpperCase());

  await page.reload();
  await expect(panel.getByText('9 recovery codes left.')).toBeVisible();
  await panel.getByLabel('Code to turn it off').fill(recovery); // spent: refused
  await panel.getByLabel('Current password').fill(player.password);
  await panel.getByRole('button', { name: 'Turn Off' }).click();
  await expect(panel.getByRole('alert')).toHaveText('Invalid two-factor code');
  await panel.getByLabel('Code to turn it off').fill(another);
  await panel.getByRole('button', { name: 'Turn Off' }).click();
  await expect(panel.getByRole('button', { name: 'Turn On' })).toBeVisible();
});
