import { formatTimeSince } from './relative-time';

const now = new Date('2026-05-01T12:00:00Z');
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);

describe('formatTimeSince', () => {
  it.each([
    [0, 'less than a minute'],
    [59, 'less than a minute'],
    [60, '1 minute'],
    [119, '1 minute'],
    [45 * 60, '45 minutes'],
    [3600, '1 hour'],
    [5 * 3600 + 59, '5 hours'],
    [86400, '1 day'],
    [29 * 86400, '29 days'],
    [30 * 86400, '1 month'],
    [200 * 86400, '6 months'],
    [365 * 86400, '1 year'],
    [3 * 365 * 86400, '3 years'],
  ])('%s s → %s', (seconds, expected) => {
    expect(formatTimeSince(ago(seconds), now)).toBe(expected);
  });

  it('accepts RFC 3339 strings', () => {
    expect(formatTimeSince('2026-05-01T11:55:00Z', now)).toBe('5 minutes');
  });

  it('treats future times as now and invalid ones as unknown', () => {
    expect(formatTimeSince(new Date(now.getTime() + 60_000), now)).toBe('less than a minute');
    expect(formatTimeSince('garbage', now)).toBe('an unknown time');
  });
});
