import { capitalize } from '@/lib/format';

// Small display helpers of the bet history (My Bets, the Fairness panel, the live table).

const timeFormat = new Intl.DateTimeFormat('en-US', { dateStyle: 'short', timeStyle: 'medium' });

/** formatBetTime shows a bet's time in the local zone, or "" when it cannot be read. */
export function formatBetTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : timeFormat.format(date);
}

/** gameTitle capitalises a game's name: "dice" → "Dice". */
export function gameTitle(game: string): string {
  return game ? capitalize(game) : 'Game';
}

/** parseObject reads a JSON object text (a bet's params or outcome), or {} when it is not one. */
export function parseObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** prettyJson indents a JSON text for reading, leaving anything else as it is. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
