// The change-password rules of SPEC.md §5, checked in the spec's order; the
// first failing rule's message is returned.

export const NEW_PASSWORD_MIN = 6;
export const NEW_PASSWORD_MAX = 128;
const SPECIAL = /[!@#$%^&*(),.?":{}|<>]/;

export interface ChangePasswordValues {
  currentPassword: string;
  /** newPassword is unknown because the rule "must be a string" is part of the contract. */
  newPassword: unknown;
  confirmPassword: string;
}

export function validateChangePassword({
  currentPassword,
  newPassword,
  confirmPassword,
}: ChangePasswordValues): string | null {
  if (!currentPassword) return 'Current password is required';
  if (newPassword === undefined || newPassword === null || newPassword === '') return 'New password is required';
  if (typeof newPassword !== 'string') return 'Password is required';
  if (newPassword.length < NEW_PASSWORD_MIN) return 'Password must be at least 6 characters long';
  if (newPassword.length > NEW_PASSWORD_MAX) return 'Password must not exceed 128 characters';
  if (
    !/[A-Z]/.test(newPassword) ||
    !/[a-z]/.test(newPassword) ||
    !/\d/.test(newPassword) ||
    !SPECIAL.test(newPassword)
  ) {
    return 'Password must contain at least one uppercase letter, one lowercase letter, one number, and one special character';
  }
  if (newPassword !== confirmPassword) return 'New passwords do not match';
  return null;
}
