import { screen, waitFor, within } from '@testing-library/react';
import { getAccessToken } from '@/lib/tokens';
import { deferred, DEV_TOKEN, devConfig, json, mockApi, setCsrfCookie } from '@/testing/mock-api';
import { player, renderApp } from '@/testing/test-utils';

const BOT_CHECK = 'I am not a robot (development check)';

function guestApi(extra: Parameters<typeof mockApi>[0] = {}) {
  setCsrfCookie();
  return mockApi({ 'GET /api/auth/config': devConfig, ...extra });
}

async function openRegister() {
  const app = renderApp('/');
  await app.user.click(await screen.findByRole('button', { name: 'Register' }));
  const dialog = await screen.findByRole('dialog', { name: 'Register' });
  return { ...app, dialog };
}

describe('Register modal', () => {
  it('has every field, the bot check and the buttons', async () => {
    guestApi();
    const { dialog } = await openRegister();
    const username = within(dialog).getByLabelText('Username');
    expect(username).toHaveAttribute('maxLength', '20');
    expect(within(dialog).getByLabelText('Email')).toHaveAttribute('type', 'email');
    expect(within(dialog).getByLabelText('Password')).toHaveAttribute('minLength', '6');
    expect(within(dialog).getByLabelText('Confirm Password')).toHaveAttribute('type', 'password');
    expect(await within(dialog).findByRole('checkbox', { name: BOT_CHECK })).not.toBeChecked();
    expect(within(dialog).getByRole('button', { name: 'Cancel' })).toBeInTheDocument();
    expect(within(dialog).getByRole('button', { name: 'Register' })).toBeInTheDocument();
  });

  it('forces the username to lowercase and strips disallowed characters', async () => {
    guestApi();
    const { dialog, user } = await openRegister();
    const username = within(dialog).getByLabelText('Username');
    await user.type(username, 'Bob Smith-99!_X');
    expect(username).toHaveValue('bobsmith99_x');
  });

  it("shows the app's messages, never the browser's validation bubbles", async () => {
    const api = guestApi();
    const { dialog, user } = await openRegister();
    const form = within(dialog).getByRole('button', { name: 'Register' }).closest('form');
    expect(form).toHaveAttribute('novalidate');
    // An empty form would stop at the browser's "required" bubble without noValidate.
    await user.click(within(dialog).getByRole('button', { name: 'Register' }));
    expect(within(dialog).getByRole('alert')).toHaveTextContent('Username must be between 3 and 20 characters');
    await user.type(within(dialog).getByLabelText('Username'), 'alice');
    await user.type(within(dialog).getByLabelText('Email'), 'not-an-email');
    await user.type(within(dialog).getByLabelText('Password'), 'abc');
    await user.type(within(dialog).getByLabelText('Confirm Password'), 'abc');
    await user.click(within(dialog).getByRole('button', { name: 'Register' }));
    expect(within(dialog).getByRole('alert')).toHaveTextContent('Password must be at least 6 characters long');
    expect(api.calls('POST /api/auth/register')).toHaveLength(0);
  });

  it(
    'shows the validation messages in order, then registers with the development token',
    { timeout: 15000 },
    async () => {
      const release = deferred<Response>();
      const api = guestApi({ 'POST /api/auth/register': () => release.promise });
      const { dialog, user } = await openRegister();
      const submit = () => user.click(within(dialog).getByRole('button', { name: 'Register' }));

      await user.type(within(dialog).getByLabelText('Username'), 'ab');
      await user.type(within(dialog).getByLabelText('Email'), 'alice@example.com');
      await user.type(within(dialog).getByLabelText('Password'), 'secret1');
      await user.type(within(dialog).getByLabelText('Confirm Password'), 'secret2');
      await submit();
      expect(within(dialog).getByRole('alert')).toHaveTextContent('Username must be between 3 and 20 characters');

      await user.type(within(dialog).getByLabelText('Username'), 'c');
      await submit();
      expect(within(dialog).getByRole('alert')).toHaveTextContent('Passwords do not match');

      await user.clear(within(dialog).getByLabelText('Confirm Password'));
      await user.type(within(dialog).getByLabelText('Confirm Password'), 'secret1');
      await submit();
      expect(within(dialog).getByRole('alert')).toHaveTextContent('Please complete the Turnstile verification');
      expect(api.calls('POST /api/auth/register')).toHaveLength(0);

      await user.click(within(dialog).getByRole('checkbox', { name: BOT_CHECK }));
      await submit();
      expect(await within(dialog).findByRole('button', { name: 'Creating account...' })).toBeDisabled();
      // Sent once this tab holds the session lock the tabs share.
      await waitFor(() => {
        expect(api.calls('POST /api/auth/register')).toHaveLength(1);
      });
      expect(api.calls('POST /api/auth/register')[0]?.body).toEqual({
        username: 'abc',
        email: 'alice@example.com',
        password: 'secret1',
        turnstileToken: DEV_TOKEN,
      });

      release.resolve(json({ token: 'access', refreshToken: '', user: { ...player, username: 'abc', balance: 1000 } }));
      expect(await screen.findByText('abc', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
      expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
      expect(screen.getByText('$1,000.00')).toBeInTheDocument();
      expect(getAccessToken()).toBe('access');
      // The refresh token is the HttpOnly cookie the server set on this answer.
      expect(api.calls('POST /api/auth/register')[0]?.headers['x-fairplay-refresh-cookie']).toBe('1');
    },
  );

  it('shows the server message, or "Failed to register", and resets the bot check', async () => {
    const api = guestApi({ 'POST /api/auth/register': () => json({ message: 'Username already taken' }, 409) });
    const { dialog, user } = await openRegister();
    await user.type(within(dialog).getByLabelText('Username'), 'alice');
    await user.type(within(dialog).getByLabelText('Email'), 'alice@example.com');
    await user.type(within(dialog).getByLabelText('Password'), 'secret1');
    await user.type(within(dialog).getByLabelText('Confirm Password'), 'secret1');
    await user.click(await within(dialog).findByRole('checkbox', { name: BOT_CHECK }));
    await user.click(within(dialog).getByRole('button', { name: 'Register' }));
    expect(await within(dialog).findByRole('alert')).toHaveTextContent('Username already taken');
    expect(within(dialog).getByRole('checkbox', { name: BOT_CHECK })).not.toBeChecked();

    api.on('POST /api/auth/register', () => new Response(null, { status: 500 }));
    await user.click(within(dialog).getByRole('checkbox', { name: BOT_CHECK }));
    await user.click(within(dialog).getByRole('button', { name: 'Register' }));
    expect(await within(dialog).findByText('Failed to register')).toBeInTheDocument();
  });

  it('opens on the Username field and gives focus back to the Register button', async () => {
    guestApi();
    const { dialog, user } = await openRegister();
    await waitFor(() => {
      expect(within(dialog).getByLabelText('Username')).toHaveFocus();
    });
    await user.keyboard('{Escape}');
    await waitFor(() => {
      expect(screen.getByRole('button', { name: 'Register' })).toHaveFocus();
    });
  });

  it('closes on Escape and on Cancel', async () => {
    guestApi();
    const { user } = await openRegister();
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Register' }));
    const dialog = await screen.findByRole('dialog', { name: 'Register' });
    await user.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });
});

describe('Sign In modal', () => {
  async function openSignIn() {
    const app = renderApp('/');
    await app.user.click(await screen.findByRole('button', { name: 'Sign In' }));
    const dialog = await screen.findByRole('dialog', { name: 'Sign In' });
    return { ...app, dialog };
  }

  it('requires the bot check, shows the busy label, and resets the check after a failed login', async () => {
    const release = deferred<Response>();
    const api = guestApi({ 'POST /api/auth/login': () => release.promise });
    const { dialog, user } = await openSignIn();
    await user.type(within(dialog).getByLabelText('Username or Email'), 'alice@example.com');
    await user.type(within(dialog).getByLabelText('Password'), 'secret1');
    await user.click(within(dialog).getByRole('button', { name: 'Sign In' }));
    expect(within(dialog).getByRole('alert')).toHaveTextContent('Please complete the Turnstile verification');

    await user.click(await within(dialog).findByRole('checkbox', { name: BOT_CHECK }));
    await user.click(within(dialog).getByRole('button', { name: 'Sign In' }));
    expect(await within(dialog).findByRole('button', { name: 'Signing in...' })).toBeDisabled();
    // Sent once this tab holds the session lock the tabs share.
    await waitFor(() => {
      expect(api.calls('POST /api/auth/login')).toHaveLength(1);
    });
    expect(api.calls('POST /api/auth/login')[0]?.body).toEqual({
      username: 'alice@example.com',
      password: 'secret1',
      turnstileToken: DEV_TOKEN,
      twoFactorCode: '',
    });

    release.resolve(json({ message: 'Invalid credentials' }, 401));
    expect(await within(dialog).findByText('Invalid credentials')).toBeInTheDocument();
    expect(within(dialog).getByRole('checkbox', { name: BOT_CHECK })).not.toBeChecked();
    expect(api.calls('POST /api/auth/refresh')).toHaveLength(0);
  });

  it('falls back to "Failed to login" and signs in on success', async () => {
    const api = guestApi({ 'POST /api/auth/login': () => json({}, 500) });
    const { dialog, user } = await openSignIn();
    await user.type(within(dialog).getByLabelText('Username or Email'), 'alice');
    await user.type(within(dialog).getByLabelText('Password'), 'secret1');
    await user.click(await within(dialog).findByRole('checkbox', { name: BOT_CHECK }));
    await user.click(within(dialog).getByRole('button', { name: 'Sign In' }));
    expect(await within(dialog).findByText('Failed to login')).toBeInTheDocument();

    api.on('POST /api/auth/login', () => json({ token: 'a', refreshToken: 'r', user: player }));
    await user.click(within(dialog).getByRole('checkbox', { name: BOT_CHECK }));
    await user.click(within(dialog).getByRole('button', { name: 'Sign In' }));
    expect(await screen.findByText('alice', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });

  it('asks for the two-factor code after the password, then signs in with it', async () => {
    const api = guestApi({
      'POST /api/auth/login': () => json({ token: '', refreshToken: '', twoFactorRequired: true }),
    });
    const { dialog, user } = await openSignIn();
    await user.type(within(dialog).getByLabelText('Username or Email'), 'alice');
    await user.type(within(dialog).getByLabelText('Password'), 'secret1');
    await user.click(await within(dialog).findByRole('checkbox', { name: BOT_CHECK }));
    await user.click(within(dialog).getByRole('button', { name: 'Sign In' }));

    const code = await within(dialog).findByLabelText('Two-factor code');
    expect(getAccessToken()).toBeFalsy();
    expect(within(dialog).getByRole('checkbox', { name: BOT_CHECK })).not.toBeChecked();
    await user.click(within(dialog).getByRole('checkbox', { name: BOT_CHECK }));
    await user.click(within(dialog).getByRole('button', { name: 'Sign In' }));
    expect(within(dialog).getByRole('alert')).toHaveTextContent('Enter the code from your authenticator app');

    api.on('POST /api/auth/login', () => json({ token: 'a', refreshToken: 'r', user: player }));
    await user.type(code, '123 456');
    await user.click(within(dialog).getByRole('button', { name: 'Sign In' }));
    expect(await screen.findByText('alice', { selector: '[title="Signed in as"]' })).toBeInTheDocument();
    expect(api.calls('POST /api/auth/login')[1]?.body).toMatchObject({ username: 'alice', twoFactorCode: '123 456' });
  });

  it('switches to the Register modal', async () => {
    guestApi();
    const { dialog, user } = await openSignIn();
    await user.click(within(dialog).getByRole('button', { name: 'Create one' }));
    expect(await screen.findByRole('dialog', { name: 'Register' })).toBeInTheDocument();
  });
});
