// Client-side checks of the sign-in and registration forms, in the order and
// with the texts of SPEC.md §5. The first failing rule's message is returned.

export const USERNAME_MAX_LENGTH = 20;
export const PASSWORD_MIN_LENGTH = 6;
/** PASSWORD_MAX_LENGTH is the server's limit for every password (SPEC.md §9), with its message. */
export const PASSWORD_MAX_LENGTH = 128;
export const BOT_CHECK_MESSAGE = 'Please complete the Turnstile verification';

export interface RegisterValues {
  username: string;
  email: string;
  password: string;
  confirmPassword: string;
  turnstileToken: string;
}

/** sanitizeUsername is what the username input keeps of what is typed: lowercase [a-z0-9_], at most 20. */
export function sanitizeUsername(raw: string): string {
  return raw
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '')
    .slice(0, USERNAME_MAX_LENGTH);
}

export function validateRegister(values: RegisterValues): string | null {
  const { username, email, password, confirmPassword, turnstileToken } = values;
  if (username.length < 3 || username.length > USERNAME_MAX_LENGTH) {
    return 'Username must be between 3 and 20 characters';
  }
  if (!/^[a-z0-9_]+$/.test(username)) {
    return 'Username can only contain lowercase letters, numbers, and underscores';
  }
  const at = email.lastIndexOf('@');
  const local = at < 0 ? email : email.slice(0, at);
  const domain = at < 0 ? '' : email.slice(at + 1);
  if (local.length > 64) return 'Email local part must be at most 64 characters long';
  if (domain.length > 255) return 'Email domain must be at most 255 characters long';
  if (password !== confirmPassword) return 'Passwords do not match';
  if (password.length < PASSWORD_MIN_LENGTH) return 'Password must be at least 6 characters long';
  if (password.length > PASSWORD_MAX_LENGTH) return 'Password must not exceed 128 characters';
  if (!turnstileToken) return BOT_CHECK_MESSAGE;
  return null;
}

export function validateSignIn(values: { turnstileToken: string }): string | null {
  return values.turnstileToken ? null : BOT_CHECK_MESSAGE;
}
