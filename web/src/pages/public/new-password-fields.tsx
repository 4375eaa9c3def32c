// A new password and its repetition: the one pair of fields the invitation and password-reset pages share.
import type { Control } from 'react-hook-form';
import { TextInput } from '../../components/ui/form.js';

export function NewPasswordFields({
  control,
  label,
}: {
  control: Control<{ password: string; confirm: string }>;
  /** "Password" on an invitation, "New password" on a reset. */
  label: string;
}) {
  return (
    <>
      <TextInput
        control={control}
        name="password"
        label={label}
        type="password"
        autoComplete="new-password"
        description="At least 12 characters; common or easily guessed passwords are refused."
        isRequired
      />
      <TextInput
        control={control}
        name="confirm"
        label={`${label} again`}
        type="password"
        autoComplete="new-password"
        isRequired
      />
    </>
  );
}
