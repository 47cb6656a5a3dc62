import { validateChangePassword, type ChangePasswordValues } from './validate-password';

const valid: ChangePasswordValues = {
  currentPassword: 'old-pass',
  newPassword: 'N3w!pass',
  confirmPassword: 'N3w!pass',
};
const COMPLEXITY =
  'Password must contain at least one uppercase letter, one lowercase letter, one number, and one special character';

describe('validateChangePassword', () => {
  it('accepts a valid change', () => {
    expect(validateChangePassword(valid)).toBeNull();
  });

  it.each<[string, Partial<ChangePasswordValues>, string]>([
    ['no current password', { currentPassword: '' }, 'Current password is required'],
    ['no new password', { newPassword: '' }, 'New password is required'],
    ['a missing new password', { newPassword: undefined }, 'New password is required'],
    ['a new password that is not a string', { newPassword: 123456 }, 'Password is required'],
    [
      'a short new password',
      { newPassword: 'Ab1!', confirmPassword: 'Ab1!' },
      'Password must be at least 6 characters long',
    ],
    [
      'a long new password',
      { newPassword: `Ab1!${'x'.repeat(125)}`, confirmPassword: `Ab1!${'x'.repeat(125)}` },
      'Password must not exceed 128 characters',
    ],
    ['no uppercase', { newPassword: 'n3w!pass', confirmPassword: 'n3w!pass' }, COMPLEXITY],
    ['no lowercase', { newPassword: 'N3W!PASS', confirmPassword: 'N3W!PASS' }, COMPLEXITY],
    ['no digit', { newPassword: 'New!pass', confirmPassword: 'New!pass' }, COMPLEXITY],
    ['no special character', { newPassword: 'N3wpasss', confirmPassword: 'N3wpasss' }, COMPLEXITY],
    ['a special character outside the set', { newPassword: 'N3w_pass', confirmPassword: 'N3w_pass' }, COMPLEXITY],
    ['a different confirmation', { confirmPassword: 'N3w!pas' }, 'New passwords do not match'],
  ])('rejects %s', (_, change, message) => {
    expect(validateChangePassword({ ...valid, ...change })).toBe(message);
  });

  it('accepts the length limits exactly and every listed special character', () => {
    const six = 'Ab1!cd';
    expect(validateChangePassword({ ...valid, newPassword: six, confirmPassword: six })).toBeNull();
    const max = `Ab1!${'x'.repeat(124)}`;
    expect(validateChangePassword({ ...valid, newPassword: max, confirmPassword: max })).toBeNull();
    for (const special of '!@#$%^&*(),.?":{}|<>') {
      const pw = `Abc12${special}`;
      expect(validateChangePassword({ ...valid, newPassword: pw, confirmPassword: pw })).toBeNull();
    }
  });

  it('reports the first failing rule in the spec order', () => {
    expect(validateChangePassword({ currentPassword: '', newPassword: '', confirmPassword: 'x' })).toBe(
      'Current password is required',
    );
    expect(validateChangePassword({ ...valid, newPassword: 'abc', confirmPassword: 'zzz' })).toBe(
      'Password must be at least 6 characters long',
    );
    expect(validateChangePassword({ ...valid, newPassword: 'abcdefg', confirmPassword: 'zzz' })).toBe(COMPLEXITY);
  });
});
