import { deviceLabel, isMobileDevice } from './device-label';

describe('deviceLabel', () => {
  it('names browser and platform', () => {
    expect(deviceLabel({ browser: 'Chrome', platform: 'Windows', userAgent: 'x', mobile: 'Desktop' })).toBe(
      'Chrome on Windows',
    );
    expect(deviceLabel({ browser: 'Safari', platform: 'iOS' })).toBe('Safari on iOS');
  });

  it('is Unknown Device when either part is missing', () => {
    expect(deviceLabel({ browser: '', platform: 'Linux' })).toBe('Unknown Device');
    expect(deviceLabel({ browser: 'Firefox', platform: ' ' })).toBe('Unknown Device');
    expect(deviceLabel({})).toBe('Unknown Device');
    expect(deviceLabel(undefined)).toBe('Unknown Device');
  });
});

describe('isMobileDevice', () => {
  it('is true only for "Mobile"', () => {
    expect(isMobileDevice({ mobile: 'Mobile' })).toBe(true);
    expect(isMobileDevice({ mobile: 'Desktop' })).toBe(false);
    expect(isMobileDevice({ mobile: 'mobile' })).toBe(false);
    expect(isMobileDevice(null)).toBe(false);
  });
});
