// The IP line of a session (SPEC.md §2): loopback is this device, private
// ranges are the internal network, anything else is shown as it is. The
// server classifies the address (Session.ipScope, computed with Go's
// net/netip), so the browser parses no addresses.

/** ipLabel describes a session's address: "Local (This Device)", "Internal Network: {ip}", "Unknown" or the address. */
export function ipLabel(ip: string | null | undefined, scope: string | null | undefined): string {
  const address = ip?.trim() ?? '';
  if (!address) return 'Unknown';
  switch (scope) {
    case 'loopback':
      return 'Local (This Device)';
    case 'private':
      return `Internal Network: ${address}`;
    default:
      return address;
  }
}
