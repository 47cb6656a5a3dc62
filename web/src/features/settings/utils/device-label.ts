import type { Session } from '../api/get-sessions';

type DeviceInfo = Session['deviceInfo'];

/** deviceLabel is "{browser} on {platform}", or "Unknown Device" when either is unknown. */
export function deviceLabel(info: Partial<DeviceInfo> | null | undefined): string {
  const browser = info?.browser?.trim();
  const platform = info?.platform?.trim();
  return browser && platform ? `${browser} on ${platform}` : 'Unknown Device';
}

/** isMobileDevice: the server reports phones and tablets as "Mobile". */
export function isMobileDevice(info: Partial<DeviceInfo> | null | undefined): boolean {
  return info?.mobile === 'Mobile';
}
