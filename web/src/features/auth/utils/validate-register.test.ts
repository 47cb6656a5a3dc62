import { sanitizeUsername, validateRegister, validateSignIn, type RegisterValues } from './validate-register';

const valid: RegisterValues = {
  username: 'alice_01',
  email: 'alice@example.com',
  password: 'secret1',
  confirmPassword: 'secret1',
  turnstileToken: 'token',
};

describe('validateRegister', () => {
  it('accepts a valid form', () => {
    expect(validateRegister(valid)).toBeNull();
  });

  it.each<[string, Partial<RegisterValues>, string]>([
    ['too short a username', { username: 'ab' }, 'Username must be between 3 and 20 characters'],
    ['an empty username', { username: '' }, 'Username must be between 3 and 20 characters'],
    ['too long a username', { username: 'a'.repeat(21) }, 'Username must be between 3 and 20 characters'],
    ['uppercase', { username: 'Alice' }, 'Username can only contain lowercase letters, numbers, and underscores'],
    ['a dash', { username: 'al-ice' }, 'Username can only contain lowercase letters, numbers, and underscores'],
    [
      'a long local part',
      { email: `${'a'.repeat(65)}@example.com` },
      'Email local part must be at most 64 characters long',
    ],
    ['a long domain', { email: `a@${'b'.repeat(256)}` }, 'Email domain must be at most 255 characters long'],
    ['different passwords', { confirmPassword: 'secret2' }, 'Passwords do not match'],
    ['a short password', { password: 'abc', confirmPassword: 'abc' }, 'Password must be at least 6 characters long'],
    [
      'a password over 128 characters',
      { password: 'a'.repeat(129), confirmPassword: 'a'.repeat(129) },
      'Password must not exceed 128 characters',
    ],
    ['no bot check', { turnstileToken: '' }, 'Please complete the Turnstile verification'],
  ])('rejects %s', (_, change, message) => {
    expect(validateRegister({ ...valid, ...change })).toBe(message);
  });

  it('accepts the limits exactly', () => {
    expect(validateRegister({ ...valid, username: 'abc' })).toBeNull();
    expect(validateRegister({ ...valid, username: 'a'.repeat(20) })).toBeNull();
    expect(validateRegister({ ...valid, password: 'a'.repeat(128), confirmPassword: 'a'.repeat(128) })).toBeNull();
    expect(validateRegister({ ...valid, email: `${'a'.repeat(64)}@${'b'.repeat(255)}` })).toBeNull();
  });

  it('reports the first failing rule in the spec order', () => {
    expect(
      validateRegister({
        username: 'A',
        email: `${'a'.repeat(65)}@x`,
        password: '1',
        confirmPassword: '2',
        turnstileToken: '',
      }),
    ).toBe('Username must be between 3 and 20 characters');
    expect(validateRegister({ ...valid, username: 'ABC', confirmPassword: 'x', turnstileToken: '' })).toBe(
      'Username can only contain lowercase letters, numbers, and underscores',
    );
    expect(validateRegister({ ...valid, email: `${'a'.repeat(65)}@x`, confirmPassword: 'x' })).toBe(
      'Email local part must be at most 64 characters long',
    );
    expect(validateRegister({ ...valid, confirmPassword: 'x', turnstileToken: '' })).toBe('Passwords do not match');
  });
});

describe('validateSignIn', () => {
  it('requires the bot check', () => {
    expect(validateSignIn({ turnstileToken: '' })).toBe('Please complete the Turnstile verification');
    expect(validateSignIn({ turnstileToken: 't' })).toBeNull();
  });
});

describe('sanitizeUsername', () => {
  it('lowercases, strips disallowed characters and keeps at most 20', () => {
    expect(sanitizeUsername('Alice Smith!')).toBe('alicesmith');
    expect(sanitizeUsername('b-o.b_99')).toBe('bob_99');
    expect(sanitizeUsername('ÄÖü')).toBe('');
    expect(sanitizeUsername('x'.repeat(25))).toBe('x'.repeat(20));
  });
});
