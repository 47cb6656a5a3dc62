// Display formatting shared by every screen (SPEC.md §9: money in dollars,
// balance with two decimals and thousands separators).

// Amounts are truncated, not rounded, to cents: a balance of 9.999 shows as
// 9.99 so the screen never promises money the account does not have.
const amountFormat = new Intl.NumberFormat('en-US', {
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
  roundingMode: 'trunc',
  signDisplay: 'negative',
});

/** formatAmount formats a dollar amount with two decimals and thousands separators: 1234.5 → "1,234.50". */
export function formatAmount(value: number): string {
  return amountFormat.format(Number.isFinite(value) ? value : 0);
}

/** formatMoney is formatAmount with the dollar sign: 1234.5 → "$1,234.50", -3 → "-$3.00". */
export function formatMoney(value: number): string {
  const text = formatAmount(value);
  return text.startsWith('-') ? `-$${text.slice(1)}` : `$${text}`;
}

/** formatPercentChange shows a change with one decimal and its sign: 12.34 → "+12.3%", -5 → "-5.0%", 0 → "0.0%". */
export function formatPercentChange(value: number): string {
  if (!Number.isFinite(value)) return '0.0%';
  const rounded = Math.round(value * 10) / 10;
  if (rounded === 0) return '0.0%';
  return `${rounded > 0 ? '+' : ''}${rounded.toFixed(1)}%`;
}

/** formatCount formats a whole number with thousands separators. */
export function formatCount(value: number): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: 0 });
}

/** formatDate is the local calendar date of an RFC 3339 time, or "—" when it is missing or invalid. */
export function formatDate(iso: string | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '—' : date.toLocaleDateString();
}

/** formatMultiplier shows a payout multiplier with two decimals and an x: 1.98 → "1.98x". */
export function formatMultiplier(value: number): string {
  return `${(Number.isFinite(value) ? value : 0).toFixed(2)}x`;
}

/** capitalize upper-cases a word's first letter: "medium" → "Medium". */
export function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
