// Pump multipliers, copied from internal/games/pump/pump.go: PUMP_MULTIPLIERS[difficulty][k]
// is what cashing out after k safe pumps pays (k = 0 is 1x). The game screen shows the
// server's figures; the fairness verifier recomputes a settled game with these.

export type PumpDifficulty = 'easy' | 'medium' | 'hard' | 'expert';

export const PUMP_DIFFICULTIES: readonly PumpDifficulty[] = ['easy', 'medium', 'hard', 'expert'];

/** PUMP_POPS is the number of pop positions drawn from 1 … 25 per difficulty. */
export const PUMP_POPS: Readonly<Record<PumpDifficulty, number>> = { easy: 1, medium: 3, hard: 5, expert: 10 };

export const PUMP_POSITIONS = 25;

export const PUMP_MULTIPLIERS: Readonly<Record<PumpDifficulty, readonly number[]>> = {
  easy: [
    1, 1.02, 1.07, 1.11, 1.17, 1.23, 1.29, 1.36, 1.44, 1.53, 1.63, 1.75, 1.88, 2.04, 2.23, 2.45, 2.72, 3.06, 3.5, 4.08,
    4.9, 6.13, 8.17, 12.25, 24.5,
  ],
  medium: [
    1, 1.11, 1.27, 1.46, 1.69, 1.98, 2.33, 2.76, 3.31, 4.03, 4.95, 6.19, 7.88, 10.25, 13.66, 18.78, 26.83, 40.25, 64.4,
    112.7, 225.4, 563.5, 2254,
  ],
  hard: [
    1, 1.23, 1.55, 1.98, 2.56, 3.36, 4.48, 6.08, 8.41, 11.92, 17.34, 26.01, 40.46, 65.74, 112.7, 206.62, 413.23, 929.77,
    2479.4, 8677.9, 52067.4,
  ],
  expert: [
    1, 1.63, 2.8, 4.95, 9.08, 17.34, 34.68, 73.21, 164.72, 400.02, 1066.73, 3200.18, 11200.65, 48536.13, 291216.8,
    3203384.8,
  ],
};
