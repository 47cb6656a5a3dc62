import { ipLabel } from './ip-label';

describe('ipLabel', () => {
  it.each([
    ['127.0.0.1', 'loopback', 'Local (This Device)'],
    ['::1', 'loopback', 'Local (This Device)'],
    ['192.168.1.20', 'private', 'Internal Network: 192.168.1.20'],
    ['fe80::1%eth0', 'private', 'Internal Network: fe80::1%eth0'],
    ['8.8.8.8', 'public', '8.8.8.8'],
    ['not-an-ip', '', 'not-an-ip'],
    ['10.0.0.1', undefined, '10.0.0.1'],
    ['', '', 'Unknown'],
    ['   ', 'private', 'Unknown'],
    [undefined, undefined, 'Unknown'],
    [null, null, 'Unknown'],
  ])('%s (%s) → %s', (ip, scope, expected) => {
    expect(ipLabel(ip, scope)).toBe(expected);
  });
});
