import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { hasSession } from '@/lib/tokens';
import { deferred, devConfig, json, mockApi, setCsrfCookie, type Handler } from '@/testing/mock-api';
import { admin, player, renderApp, signIn } from '@/testing/test-utils';
import { LOGOUT_AFTER_CHANGE_MS, PASSWORD_CHANGED_MESSAGE } from './change-password-form';

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

const sessions = [
  {
    _id: 's1',
    lastUsedAt: minutesAgo(0),
    ipAddress: '127.0.0.1',
    ipScope: 'loopback',
    deviceInfo: { userAgent: 'ua', platform: 'Linux', browser: 'Firefox', mobile: 'Desktop' },
    createdAt: minutesAgo(100),
    current: true,
  },
  {
    _id: 's2',
    lastUsedAt: minutesAgo(5),
    ipAddress: '192.168.1.20',
    ipScope: 'private',
    deviceInfo: { userAgent: 'ua', platform: 'iOS', browser: 'Safari', mobile: 'Mobile' },
    createdAt: minutesAgo(500),
    current: false,
  },
  {
    _id: 's3',
    lastUsedAt: minutesAgo(60 * 24 * 3),
    ipAddress: '',
    ipScope: '',
    deviceInfo: { userAgent: '', platform: '', browser: '', mobile: 'Desktop' },
    createdAt: minutesAgo(60 * 24 * 4),
    current: false,
  },
];

function api(extra: Record<string, Handler> = {}, user = player) {
  setCsrfCookie();
  signIn();
  return mockApi({
    'GET /api/auth/config': devConfig,
    'GET /api/auth/user': () => json({ user }),
    'GET /api/auth/sessions': () => json({ sessions }),
    'GET /api/auth/2fa': () => json({ enabled: false, recoveryCodesLeft: 0 }),
    'POST /api/auth/logout': () => json({ message: 'ok' }),
    ...extra,
  });
}

async function openSecurity() {
  const app = renderApp('/settings?tab=security');
  await screen.findByRole('heading', { name: 'Change Password' });
  return app;
}

describe('Account settings', () => {
  it('shows the account information and the side menu', async () => {
    api();
    renderApp('/settings');
    const info = await screen.findByRole('region', { name: 'Account Information' });
    expect(within(info).getByText('alice')).toBeInTheDocument();
    expect(within(info).getByText('alice@example.com')).toBeInTheDocument();
    expect(within(info).getByText('$1,234.50')).toBeInTheDocument();
    expect(within(info).getByText('Regular User')).toBeInTheDocument();
    expect(screen.getByRole('tab', { name: 'Account Information' })).toHaveAttribute('aria-selected', 'true');
    expect(screen.getByRole('tab', { name: 'Security & Sessions' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Logout' })).toBeInTheDocument();
  });

  it('calls administrators Administrator', async () => {
    api({}, admin);
    renderApp('/settings');
    expect(await screen.findByText('Administrator')).toBeInTheDocument();
  });

  it('Logout logs out and goes home', async () => {
    const server = api();
    const { user, router } = renderApp('/settings');
    await user.click(await screen.findByRole('button', { name: 'Logout' }));
    await waitFor(() => {
      expect(router.state.location.pathname).toBe('/');
    });
    expect(server.calls('POST /api/auth/logout')).toHaveLength(1);
    expect(await screen.findByRole('button', { name: 'Sign In' })).toBeInTheDocument();
  });
});

describe('Change password', () => {
  async function fill(
    user: Awaited<ReturnType<typeof openSecurity>>['user'],
    current: string,
    next: string,
    confirm: string,
  ) {
    for (const [label, value] of [
      ['Current Password', current],
      ['New Password', next],
      ['Confirm New Password', confirm],
    ] as const) {
      const input = screen.getByLabelText(label);
      await user.clear(input);
      if (value) await user.type(input, value);
    }
  }

  it('checks every rule client-side, in order', async () => {
    const server = api();
    const { user } = await openSecurity();
    const submit = () => user.click(screen.getByRole('button', { name: 'Change Password' }));
    const alert = () => screen.getByRole('alert');

    await submit();
    expect(alert()).toHaveTextContent('Current password is required');
    await fill(user, 'old', '', '');
    await submit();
    expect(alert()).toHaveTextContent('New password is required');
    await fill(user, 'old', 'Ab1!', 'Ab1!');
    await submit();
    expect(alert()).toHaveTextContent('Password must be at least 6 characters long');
    await fill(user, 'old', 'abcdefgh', 'abcdefgh');
    await submit();
    expect(alert()).toHaveTextContent(
      'Password must contain at least one uppercase letter, one lowercase letter, one number, and one special character',
    );
    await fill(user, 'old', 'Abcdef1!', 'Abcdef1?');
    await submit();
    expect(alert()).toHaveTextContent('New passwords do not match');
    expect(server.calls('POST /api/auth/change-password')).toHaveLength(0);
  });

  it('lets the over-128 message appear: New and Confirm take any length alike', async () => {
    const server = api();
    const { user } = await openSecurity();
    const long = `Aa1!${'x'.repeat(125)}`;
    expect(long).toHaveLength(129);
    for (const label of ['New Password', 'Confirm New Password']) {
      const input = screen.getByLabelText(label);
      expect(input).not.toHaveAttribute('maxLength');
      fireEvent.change(input, { target: { value: long } });
      expect(input).toHaveValue(long);
    }
    fireEvent.change(screen.getByLabelText('Current Password'), { target: { value: 'old' } });
    await user.click(screen.getByRole('button', { name: 'Change Password' }));
    expect(screen.getByRole('alert')).toHaveTextContent('Password must not exceed 128 characters');
    expect(server.calls('POST /api/auth/change-password')).toHaveLength(0);
  });

  it('shows the server message, or the fallback', async () => {
    const server = api({
      'POST /api/auth/change-password': () => json({ message: 'Current password is incorrect' }, 400),
    });
    const { user } = await openSecurity();
    await fill(user, 'wrong', 'Abcdef1!', 'Abcdef1!');
    await user.click(screen.getByRole('button', { name: 'Change Password' }));
    expect(await screen.findByText('Current password is incorrect')).toBeInTheDocument();

    server.on('POST /api/auth/change-password', () => json({ message: 42 }, 500));
    await user.click(screen.getByRole('button', { name: 'Change Password' }));
    expect(await screen.findByText('Failed to change password')).toBeInTheDocument();
  });

  it('blocks a second submission while pending, then toasts, clears the form and logs out after 3 s', async () => {
    const release = deferred<Response>();
    const server = api({ 'POST /api/auth/change-password': () => release.promise });
    const { user } = await openSecurity();
    await fill(user, 'old-pass', 'Abcdef1!', 'Abcdef1!');
    const button = screen.getByRole('button', { name: 'Change Password' });
    await user.click(button);
    expect(await screen.findByRole('button', { name: 'Changing Password...' })).toBeDisabled();
    fireEvent.submit(button.closest('form')!);
    expect(server.calls('POST /api/auth/change-password')).toHaveLength(1);
    expect(server.calls('POST /api/auth/change-password')[0]?.body).toEqual({
      currentPassword: 'old-pass',
      newPassword: 'Abcdef1!',
    });

    // Hold back the sign-out timer to check its delay and run it by hand.
    const held: { delay: number | undefined; run: () => void }[] = [];
    const realSetTimeout = window.setTimeout.bind(window);
    vi.spyOn(window, 'setTimeout').mockImplementation(((handler: () => void, delay?: number) => {
      if (delay === LOGOUT_AFTER_CHANGE_MS) {
        held.push({ delay, run: handler });
        return 0;
      }
      return realSetTimeout(handler, delay);
    }) as typeof window.setTimeout);

    release.resolve(json({ message: 'Password changed' }));
    expect(await screen.findByText(PASSWORD_CHANGED_MESSAGE)).toBeInTheDocument();
    expect(screen.getByLabelText('Current Password')).toHaveValue('');
    expect(screen.getByLabelText('New Password')).toHaveValue('');
    expect(held).toHaveLength(1);
    expect(server.calls('POST /api/auth/logout')).toHaveLength(0);
    act(() => {
      held[0]?.run();
    });
    await waitFor(() => {
      expect(server.calls('POST /api/auth/logout')).toHaveLength(1);
    });
    await waitFor(() => {
      expect(hasSession()).toBe(false);
    });
    expect(LOGOUT_AFTER_CHANGE_MS).toBe(3000);
  });
});

describe('Active sessions', () => {
  it('lists each session with its device, activity and address', async () => {
    api();
    await openSecurity();
    const list = await within(screen.getByRole('region', { name: 'Active Sessions' })).findByRole('list');
    const items = within(list).getAllByRole('listitem');
    expect(items).toHaveLength(3);
    const [first, second, third] = items as [HTMLElement, HTMLElement, HTMLElement];

    expect(within(first).getByText('Firefox on Linux')).toBeInTheDocument();
    expect(within(first).getByRole('img', { name: 'Desktop device' })).toBeInTheDocument();
    expect(within(first).getByText('Last active: less than a minute ago')).toBeInTheDocument();
    expect(within(first).getByText('IP: Local (This Device)')).toBeInTheDocument();

    expect(within(second).getByText('Safari on iOS')).toBeInTheDocument();
    expect(within(second).getByRole('img', { name: 'Mobile device' })).toBeInTheDocument();
    expect(within(second).getByText('Last active: 5 minutes ago')).toBeInTheDocument();
    expect(within(second).getByText('IP: Internal Network: 192.168.1.20')).toBeInTheDocument();

    expect(within(third).getByText('Unknown Device')).toBeInTheDocument();
    expect(within(third).getByText('Last active: 3 days ago')).toBeInTheDocument();
    expect(within(third).getByText('IP: Unknown')).toBeInTheDocument();

    expect(screen.getByText('Sessions are automatically expired after 30 days of inactivity.')).toBeInTheDocument();
  });

  it('revokes one session, or all the others, and reloads the list', async () => {
    const server = api({
      'POST /api/auth/revoke-session': () => json({ message: 'ok' }),
      'POST /api/auth/revoke-other-sessions': () => json({ message: 'ok', revoked: 2 }),
    });
    const { user } = await openSecurity();
    await user.click(await screen.findByRole('button', { name: 'Revoke Safari on iOS session' }));
    await waitFor(() => {
      expect(server.calls('GET /api/auth/sessions')).toHaveLength(2);
    });
    expect(server.calls('POST /api/auth/revoke-session')[0]?.body).toEqual({ sessionId: 's2' });

    await user.click(screen.getByRole('button', { name: 'Revoke All Other Sessions' }));
    await waitFor(() => {
      expect(server.calls('GET /api/auth/sessions')).toHaveLength(3);
    });
    // The server keeps the session the access token names: the refresh token is out of the page's reach.
    const [revokeOthers] = server.calls('POST /api/auth/revoke-other-sessions');
    expect(revokeOthers?.body).toEqual({});
    expect(revokeOthers?.headers.authorization).toBe('Bearer access-token');

    await user.click(screen.getByRole('button', { name: 'Refresh' }));
    await waitFor(() => {
      expect(server.calls('GET /api/auth/sessions')).toHaveLength(4);
    });
  });

  it('offers Revoke All Other Sessions only with more than one session, and has an empty state', async () => {
    const server = api({ 'GET /api/auth/sessions': () => json({ sessions: [sessions[0]] }) });
    const first = await openSecurity();
    expect(await screen.findByText('Firefox on Linux')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Revoke All Other Sessions' })).not.toBeInTheDocument();
    first.unmount();

    server.on('GET /api/auth/sessions', () => json({ sessions: [] }));
    await openSecurity();
    expect(await screen.findByText('No active sessions found.')).toBeInTheDocument();
  });

  it('only logs failures', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    api({ 'GET /api/auth/sessions': () => json({ message: 'boom' }, 500) });
    await openSecurity();
    await waitFor(() => {
      expect(logged).toHaveBeenCalledWith('Failed to fetch sessions', expect.anything());
    });
    expect(screen.queryByText('boom')).not.toBeInTheDocument();
  });
});
