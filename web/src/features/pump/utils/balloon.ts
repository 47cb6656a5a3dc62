// Pump's balloon (SPEC.md §9): 50 px plus 5 px per pump, capped at 100 px.

export const BALLOON_BASE_PX = 50;
export const BALLOON_GROWTH_PX = 5;
export const BALLOON_MAX_PX = 100;

/** balloonSize is the balloon's diameter in pixels after a number of pumps. */
export function balloonSize(pumps: number): number {
  return Math.min(BALLOON_MAX_PX, BALLOON_BASE_PX + BALLOON_GROWTH_PX * Math.max(0, pumps));
}

/** potentialWin is what cashing out would pay now: the stake times the multiplier. */
export function potentialWin(stake: number, multiplier: number): number {
  return stake * multiplier;
}
