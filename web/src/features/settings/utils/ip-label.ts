// The IP line of a session (SPEC.md §2): loopback is this device, private
// ranges are the internal network, anything else is shown as it is.

function parseIPv4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes = parts.map((part) => (/^\d{1,3}$/.test(part) ? Number(part) : NaN));
  return bytes.every((b) => b >= 0 && b <= 255) ? bytes : null;
}

/** parseIPv6 returns the eight 16-bit groups of an IPv6 address, or null. */
function parseIPv6(text: string): number[] | null {
  let address = text;
  // An embedded IPv4 tail (e.g. ::ffff:10.0.0.1) becomes two groups.
  const lastColon = address.lastIndexOf(':');
  const tail = address.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseIPv4(tail);
    if (!v4) return null;
    const [a = 0, b = 0, c = 0, d = 0] = v4;
    address = `${address.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = address.split('::');
  if (halves.length > 2) return null;
  const toGroups = (part: string | undefined) => (part ? part.split(':') : []);
  const head = toGroups(halves[0]);
  const rest = toGroups(halves[1]);
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  const values = groups.map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN));
  return values.every((v) => !Number.isNaN(v)) ? values : null;
}

type Scope = 'loopback' | 'private' | 'public';

function scopeOfIPv4([a = 0, b = 0]: number[]): Scope {
  if (a === 127) return 'loopback';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private';
  return 'public';
}

function scopeOf(ip: string): Scope | null {
  const v4 = parseIPv4(ip);
  if (v4) return scopeOfIPv4(v4);
  const v6 = parseIPv6(ip);
  if (!v6) return null;
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = v6;
  // IPv4-mapped (::ffff:a.b.c.d) addresses follow the IPv4 rules.
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) {
    return scopeOfIPv4([g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff]);
  }
  if (v6.slice(0, 7).every((g) => g === 0) && g7 === 1) return 'loopback';
  if ((g0 & 0xfe00) === 0xfc00) return 'private'; // fc00::/7 unique local
  if ((g0 & 0xffc0) === 0xfe80) return 'private'; // fe80::/10 link local
  return 'public';
}

/** ipLabel describes a session's address: "Local (This Device)", "Internal Network: {ip}", "Unknown" or the address. */
export function ipLabel(ip: string | null | undefined): string {
  const address = ip?.trim() ?? '';
  if (!address) return 'Unknown';
  // Accept "[::1]" and zone ids ("fe80::1%eth0") as servers sometimes report them.
  const bare = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  switch (scopeOf(bare)) {
    case 'loopback':
      return 'Local (This Device)';
    case 'private':
      return `Internal Network: ${address}`;
    default:
      return address;
  }
}
