import { TextField } from '@/components/ui/text-field';

/**
 * CurrentPasswordField asks for the account's password before an act a signed-in session alone must not do: turning
 * two-factor sign-in on or off, a self-exclusion.
 */
export function CurrentPasswordField({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  return (
    <TextField
      label="Current password"
      name="currentPassword"
      type="password"
      autoComplete="current-password"
      value={value}
      onChange={(event) => {
        onChange(event.target.value);
      }}
    />
  );
}
