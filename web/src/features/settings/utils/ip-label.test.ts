import { ipLabel } from './ip-label';

describe('ipLabel', () => {
  it.each([
    ['127.0.0.1', 'Local (This Device)'],
    ['127.255.10.3', 'Local (This Device)'],
    ['::1', 'Local (This Device)'],
    ['0:0:0:0:0:0:0:1', 'Local (This Device)'],
    ['[::1]', 'Local (This Device)'],
    ['::ffff:127.0.0.1', 'Local (This Device)'],
    ['10.1.2.3', 'Internal Network: 10.1.2.3'],
    ['172.16.0.1', 'Internal Network: 172.16.0.1'],
    ['172.31.255.255', 'Internal Network: 172.31.255.255'],
    ['192.168.1.20', 'Internal Network: 192.168.1.20'],
    ['fc00::1', 'Internal Network: fc00::1'],
    ['fd12:3456::9', 'Internal Network: fd12:3456::9'],
    ['fe80::1', 'Internal Network: fe80::1'],
    ['febf::abcd', 'Internal Network: febf::abcd'],
    ['fe80::1%eth0', 'Internal Network: fe80::1%eth0'],
    ['::ffff:192.168.0.7', 'Internal Network: ::ffff:192.168.0.7'],
    ['172.15.0.1', '172.15.0.1'],
    ['172.32.0.1', '172.32.0.1'],
    ['192.169.1.1', '192.169.1.1'],
    ['11.0.0.1', '11.0.0.1'],
    ['8.8.8.8', '8.8.8.8'],
    ['2001:db8::1', '2001:db8::1'],
    ['fec0::1', 'fec0::1'],
    ['::2', '::2'],
    ['', 'Unknown'],
    ['   ', 'Unknown'],
    [undefined, 'Unknown'],
    [null, 'Unknown'],
    ['not-an-ip', 'not-an-ip'],
    ['999.1.1.1', '999.1.1.1'],
  ])('%s → %s', (ip, expected) => {
    expect(ipLabel(ip)).toBe(expected);
  });
});
