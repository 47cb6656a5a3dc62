/**
 * newRequestId makes a random UUID (version 4) that names one request a client may send again (a balance
 * adjustment's requestId). crypto.randomUUID exists only in secure contexts (HTTPS or localhost), so a dashboard
 * served over plain HTTP on a LAN address builds one from crypto.getRandomValues, which every context has.
 */
export function newRequestId(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  // The version (4) and the variant (RFC 9562) bits.
  const hex = Array.from(b, (x, i) => {
    if (i === 6) x = (x & 0x0f) | 0x40;
    if (i === 8) x = (x & 0x3f) | 0x80;
    return x.toString(16).padStart(2, '0');
  }).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
