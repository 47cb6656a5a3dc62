// Relative times for "Last active: {relative time} ago" (SPEC.md §2).

const UNITS: [limitSeconds: number, secondsPerUnit: number, unit: string][] = [
  [3600, 60, 'minute'],
  [86400, 3600, 'hour'],
  [86400 * 30, 86400, 'day'],
  [86400 * 365, 86400 * 30, 'month'],
  [Infinity, 86400 * 365, 'year'],
];

/**
 * formatTimeSince describes how long ago `then` was, without the word "ago":
 * "less than a minute", "1 minute", "5 hours", "3 days", "2 months", "1 year".
 * Future times (clock skew) count as now.
 */
export function formatTimeSince(then: Date | string, now: Date = new Date()): string {
  const date = typeof then === 'string' ? new Date(then) : then;
  if (Number.isNaN(date.getTime())) return 'an unknown time';
  const seconds = Math.max(0, (now.getTime() - date.getTime()) / 1000);
  if (seconds < 60) return 'less than a minute';
  for (const [limit, per, unit] of UNITS) {
    if (seconds < limit) {
      const count = Math.floor(seconds / per);
      return `${count} ${unit}${count === 1 ? '' : 's'}`;
    }
  }
  return 'an unknown time';
}
