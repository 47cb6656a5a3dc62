// Dice's roll-under target (SPEC.md §2, §5, §9): 2 to 98 in steps of 0.1, default 50.
// The win chance is the target itself; the multiplier is 99 / target to 2 decimals.

export const DICE_MIN_TARGET = 2;
export const DICE_MAX_TARGET = 98;
export const DICE_STEP = 0.1;
export const DICE_DEFAULT_TARGET = 50;

/** clampTarget snaps a slider value onto the 0.1 grid within 2 … 98. */
export function clampTarget(value: number): number {
  if (!Number.isFinite(value)) return DICE_DEFAULT_TARGET;
  const tenths = Math.round(value * 10);
  return Math.min(DICE_MAX_TARGET * 10, Math.max(DICE_MIN_TARGET * 10, tenths)) / 10;
}

/**
 * diceMultiplier is 99 / target rounded to 2 decimals, halves up, computed in whole
 * tenths and hundredths as the server does (99 / 40 = 2.475 → 2.48, where floating
 * point would give 2.47).
 */
export function diceMultiplier(target: number): number {
  const tenths = Math.round(clampTarget(target) * 10);
  return Math.floor((2 * 99000 + tenths) / (2 * tenths)) / 100;
}

/** winChance is the chance of rolling under the target, in percent: the target itself. */
export function winChance(target: number): number {
  return clampTarget(target);
}

/** formatTarget shows a target or a win chance with one decimal: 50 → "50.0". */
export function formatTarget(value: number): string {
  return clampTarget(value).toFixed(1);
}

/** DICE_ROLL_MS is how long the marker slides to the roll (the .markerLane transition); the result shows after it. */
export const DICE_ROLL_MS = 450;
