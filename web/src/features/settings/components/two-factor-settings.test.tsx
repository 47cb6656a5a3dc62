import { screen, within } from '@testing-library/react';
import { devConfig, json, mockApi, setCsrfCookie, type Handler } from '@/testing/mock-api';
import { player, renderApp, signIn } from '@/testing/test-utils';

const setup = {
  secret: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ',
  otpauthUrl: 'otpauth://totp/Fairplay:alice',
  qrSize: 21,
  qrPath: 'M0 0h7v1h-7z',
};
const codes = Array.from({ length: 10 }, (_, i) => `abcd${i}-efgh${i}`);

function api(extra: Record<string, Handler>) {
  setCsrfCookie();
  signIn();
  return mockApi({
    'GET /api/auth/config': devConfig,
    'GET /api/auth/user': () => json({ user: player }),
    'GET /api/auth/sessions': () => json({ sessions: [] }),
    ...extra,
  });
}

async function openPanel() {
  const app = renderApp('/settings?tab=security');
  const panel = (await screen.findByRole('heading', { name: 'Two-Factor Authentication' })).closest('section');
  if (!panel) throw new Error('no panel');
  return { ...app, panel };
}

describe('Two-factor settings', () => {
  it('turns it on: QR code and key, a code and the password to confirm, then the recovery codes once', async () => {
    let enabled = false;
    const server = api({
      'GET /api/auth/2fa': () => json({ enabled, recoveryCodesLeft: enabled ? 10 : 0 }),
      'POST /api/auth/2fa/setup': () => json(setup),
      'POST /api/auth/2fa/enable': ({ body }) => {
        const { code, password } = body as { code: string; password: string };
        if (password !== 'secret123') return json({ message: 'Current password is incorrect' }, 400);
        if (code !== '123456') return json({ message: 'Invalid two-factor code' }, 400);
        enabled = true;
        return json({ recoveryCodes: codes, user: { ...player, twoFactorEnabled: true } });
      },
    });
    const { panel, user } = await openPanel();
    await user.click(await within(panel).findByRole('button', { name: 'Turn On' }));

    const qr = await within(panel).findByRole('img', { name: 'QR code for your authenticator app' });
    expect(qr.querySelector('path')).toHaveAttribute('d', setup.qrPath);
    expect(within(panel).getByText('GEZD GNBV GY3T QOJQ GEZD GNBV GY3T QOJQ')).toBeInTheDocument();

    await user.click(within(panel).getByRole('button', { name: 'Confirm' }));
    expect(within(panel).getByRole('alert')).toHaveTextContent('Enter the code from your authenticator app');
    expect(server.calls('POST /api/auth/2fa/enable')).toHaveLength(0);

    await user.type(within(panel).getByLabelText('Code from the app'), '000000');
    await user.click(within(panel).getByRole('button', { name: 'Confirm' }));
    expect(within(panel).getByRole('alert')).toHaveTextContent('Current password is required');
    expect(server.calls('POST /api/auth/2fa/enable')).toHaveLength(0);

    await user.type(within(panel).getByLabelText('Current password'), 'wrong-one');
    await user.click(within(panel).getByRole('button', { name: 'Confirm' }));
    expect(await within(panel).findByText('Current password is incorrect')).toBeInTheDocument();

    await user.clear(within(panel).getByLabelText('Current password'));
    await user.type(within(panel).getByLabelText('Current password'), 'secret123');
    await user.click(within(panel).getByRole('button', { name: 'Confirm' }));
    expect(await within(panel).findByText('Invalid two-factor code')).toBeInTheDocument();
    expect(server.calls('POST /api/auth/2fa/enable').at(-1)?.body).toEqual({ code: '000000', password: 'secret123' });

    await user.clear(within(panel).getByLabelText('Code from the app'));
    await user.type(within(panel).getByLabelText('Code from the app'), '123456');
    await user.click(within(panel).getByRole('button', { name: 'Confirm' }));
    const list = await within(panel).findByRole('list', { name: 'Recovery codes' });
    expect(
      within(list)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(codes);

    await user.click(within(panel).getByRole('button', { name: 'I saved them' }));
    expect(await within(panel).findByText(/10 recovery codes left/)).toBeInTheDocument();
    expect(within(panel).queryByRole('list', { name: 'Recovery codes' })).not.toBeInTheDocument();
  });

  it('turns it off with a code and the password', async () => {
    let enabled = true;
    const server = api({
      'GET /api/auth/2fa': () => json({ enabled, recoveryCodesLeft: 1 }),
      'POST /api/auth/2fa/disable': () => {
        enabled = false;
        return json({ message: 'Two-factor authentication is off', user: player });
      },
    });
    const { panel, user } = await openPanel();
    expect(await within(panel).findByText(/1 recovery code left/)).toBeInTheDocument();
    await user.click(within(panel).getByRole('button', { name: 'Turn Off' }));
    expect(within(panel).getByRole('alert')).toHaveTextContent('Enter the code from your authenticator app');
    await user.type(within(panel).getByLabelText('Code to turn it off'), 'abcd0-efgh0');
    await user.click(within(panel).getByRole('button', { name: 'Turn Off' }));
    expect(within(panel).getByRole('alert')).toHaveTextContent('Current password is required');
    expect(server.calls('POST /api/auth/2fa/disable')).toHaveLength(0);
    await user.type(within(panel).getByLabelText('Current password'), 'secret123');
    await user.click(within(panel).getByRole('button', { name: 'Turn Off' }));
    expect(await within(panel).findByRole('button', { name: 'Turn On' })).toBeInTheDocument();
    expect(server.calls('POST /api/auth/2fa/disable')[0]?.body).toEqual({ code: 'abcd0-efgh0', password: 'secret123' });
  });
});
