// Responsible gambling in the browser against the real server, on a 360 px
// phone: a loss limit set in Settings refuses a dice bet that could pass it
// (the server's message shown), a looser limit waits 24 hours, and a break
// refuses every bet while the player stays signed in; a self-exclusion asks
// for the password first.
import { expect, test } from './fixtures';

test.use({ viewport: { width: 360, height: 780 } });

test('a loss limit and a break stop bets with the server’s message', async ({ signedInPage: page, snap }) => {
  const notifications = page.getByRole('region', { name: 'Notifications' });
  const roll = async (amount: string) => {
    await page.getByLabel('Bet Amount').fill(amount);
    await page.getByRole('button', { name: 'Roll Dice' }).click();
  };

  await page.goto('/settings?tab=limits');
  const panel = page.locator('section', { has: page.getByRole('heading', { name: 'Responsible Gambling' }) });
  await panel.getByLabel('Daily loss limit').fill('0.50');
  await panel.getByLabel('Reality check').selectOption('30');
  await panel.getByRole('button', { name: 'Save Limits' }).click();
  await expect(notifications.getByText('Limits saved', { exact: true })).toBeVisible();
  expect(await page.evaluate(() => document.documentElement.scrollWidth), 'no horizontal scroll').toBeLessThanOrEqual(
    360,
  );
  await snap(page, 'limits-360');

  await page.goto('/games/dice');
  await roll('1');
  await expect(
    notifications.getByText('This bet could take your net loss past your daily loss limit of 0.50', { exact: true }),
  ).toBeVisible();
  // A bet within the limit is placed.
  await roll('0.5');
  await expect(page.getByRole('region', { name: 'Results' }).getByText(/^(WIN|LOSE)!$/)).toBeVisible();

  // Loosening waits 24 hours.
  await page.goto('/settings?tab=limits');
  await panel.getByLabel('Daily loss limit').fill('100');
  await panel.getByRole('button', { name: 'Save Limits' }).click();
  await expect(panel.getByRole('status')).toContainText('The looser limits above apply from');

  // A break, after a confirmation.
  await panel.getByLabel('Break length').selectOption('1');
  await panel.getByRole('button', { name: 'Take a Break' }).click();
  const dialog = page.getByRole('dialog', { name: 'Take a 1 day break?' });
  await dialog.getByRole('button', { name: 'Start the Break' }).click();
  await expect(panel.getByText(/You are taking a break from betting until/)).toBeVisible();

  await page.goto('/games/dice');
  await roll('0.1');
  await expect(notifications.getByText(/^You are taking a break from betting until /)).toBeVisible();
});

test('a self-exclusion takes the password, then refuses every bet', async ({ signedInPage: page, player, snap }) => {
  const notifications = page.getByRole('region', { name: 'Notifications' });
  await page.goto('/settings?tab=limits');
  const panel = page.locator('section', { has: page.getByRole('heading', { name: 'Responsible Gambling' }) });
  await panel.getByLabel('Exclude me for').selectOption('six_months');
  await panel.getByRole('button', { name: 'Exclude Me' }).click();
  const dialog = page.getByRole('dialog', { name: 'Exclude yourself for 6 months?' });
  await dialog.getByLabel('Current password').fill('not-the-password');
  await dialog.getByRole('button', { name: 'Exclude Me' }).click();
  await expect(dialog.getByRole('alert')).toHaveText('Current password is incorrect');
  await snap(page, 'self-exclusion-360');
  expect(await page.evaluate(() => document.documentElement.scrollWidth), 'no horizontal scroll').toBeLessThanOrEqual(
    360,
  );

  await dialog.getByLabel('Current password').fill(player.password);
  await dialog.getByRole('button', { name: 'Exclude Me' }).click();
  await expect(panel.getByText(/You have excluded yourself from betting until/)).toBeVisible();

  await page.goto('/games/dice');
  await page.getByLabel('Bet Amount').fill('0.1');
  await page.getByRole('button', { name: 'Roll Dice' }).click();
  await expect(notifications.getByText(/^You have excluded yourself from betting until /)).toBeVisible();
});
