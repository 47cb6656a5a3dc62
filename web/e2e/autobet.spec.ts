// Autobet and hotkeys in the browser against the real server: every autobet
// bet is an ordinary POST, the martingale doubles after a loss and resets
// after a win, the run stops at its count or at once on Stop, and the
// hotkeys do nothing until switched on.
import { expect, test, type Page } from './fixtures';

interface Placed {
  stake: number;
  win: number;
}

/** watchDice records every dice bet the page places and what the server answered. */
function watchDice(page: Page) {
  const placed: Placed[] = [];
  page.on('response', async (res) => {
    if (!res.url().endsWith('/api/games/dice') || res.request().method() !== 'POST' || res.status() !== 200) return;
    const body = res.request().postDataJSON() as { betAmount: number };
    const answer = (await res.json()) as { winAmount: number };
    placed.push({ stake: body.betAmount, win: answer.winAmount });
  });
  return placed;
}

test('dice autobet: five bets, doubled after a loss, reset after a win, then Stop on a run without end', async ({
  signedInPage: page,
}) => {
  const placed = watchDice(page);
  await page.goto('/games/dice');
  await page.getByRole('tab', { name: 'Auto' }).click();
  await page.getByLabel('Number of Bets').fill('5');
  await page.getByRole('group', { name: 'On Loss' }).getByRole('button', { name: 'Increase' }).click();
  await page.getByLabel('Increase on Loss by %').fill('100');
  await page.getByRole('button', { name: 'Start Autobet' }).click();
  await expect(page.getByText('Autobet finished: 5 bets placed.')).toBeVisible();
  await expect(page.getByTestId('autobet-count')).toHaveText(/5 \/ 5 bets/);
  expect(placed).toHaveLength(5);
  for (let i = 1; i < placed.length; i++) {
    const prev = placed[i - 1] ?? { stake: 0, win: 0 };
    expect(placed[i]?.stake, `bet ${String(i + 1)} after a ${prev.win > prev.stake ? 'win' : 'loss'}`).toBe(
      prev.win > prev.stake ? placed[0]?.stake : prev.stake * 2,
    );
  }
  const net = placed.reduce((sum, p) => sum + p.win - p.stake, 0);
  await expect(page.getByTestId('balance')).toHaveText(
    `$${(1000 + net).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`,
  );

  // No end: Stop lets the bet in flight finish and sends nothing more.
  await page.getByLabel('Number of Bets').fill('0');
  await page.getByRole('group', { name: 'On Loss' }).getByRole('button', { name: 'Reset' }).click();
  await page.getByRole('button', { name: 'Start Autobet' }).click();
  await expect.poll(() => placed.length).toBeGreaterThanOrEqual(8);
  await page.getByRole('button', { name: 'Stop Autobet' }).click();
  await expect(page.getByText('Autobet stopped.')).toBeVisible();
  // "stopped" shows once the bet in flight has settled: from then on only the player's own bets are sent.
  const atStop = placed.length;
  await page.getByRole('tab', { name: 'Manual' }).click();
  await page.getByRole('button', { name: 'Roll Dice' }).click();
  await expect.poll(() => placed.length).toBe(atStop + 1);
});

test('hotkeys do nothing until switched on; then Space rolls once and W doubles the bet', async ({
  signedInPage: page,
}) => {
  const placed = watchDice(page);
  await page.goto('/games/dice');
  await page.locator('body').press('Space');
  await page.locator('body').press('w');
  await expect(page.getByLabel('Bet Amount')).toHaveValue('1');
  await page.getByRole('button', { name: /Hotkeys off/ }).click();
  const dialog = page.getByRole('dialog', { name: 'Hotkeys' });
  await dialog.getByRole('switch', { name: 'Enable hotkeys' }).click();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await page.locator('body').press('w');
  await expect(page.getByLabel('Bet Amount')).toHaveValue('2');
  // Closing the dialog gave focus back to its button, where Space stays the button's: move focus off it.
  await page.evaluate(() => {
    (document.activeElement as HTMLElement | null)?.blur();
  });
  await page.keyboard.press('Space');
  await expect.poll(() => placed.length).toBe(1);
  expect(placed[0]?.stake).toBe(2);
  await page.reload();
  await expect(page.getByRole('button', { name: /Hotkeys on/ })).toBeVisible();
});
