/** `/accept-invitation?token=`: the invited person chooses a password and is signed in. */
import { useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { z } from 'zod';
import { ApiError, api } from '../../api.js';
import { Button } from '../../components/ui/button.js';
import { applyProblem, FormError, TextInput, useZodForm } from '../../components/ui/form.js';
import { meQueryKey } from '../../session.js';
import { newPasswordRule } from '../account/account-page.js';
import { PublicCard } from './public-card.js';

const form = z
  .object({ password: newPasswordRule, confirm: z.string() })
  .refine((v) => v.password === v.confirm, { path: ['confirm'], message: 'The two passwords differ' });

const ENDED: Record<string, string> = {
  invitation_used: 'This invitation has already been accepted. Sign in with the password you chose.',
  invitation_expired: 'This invitation has expired. Ask an admin of the workspace to invite you again.',
};

export function AcceptInvitationPage({ token }: { token: string }) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [ended, setEnded] = useState<string | null>(
    token ? null : 'This link is incomplete: open it again from the e-mail.',
  );
  const f = useZodForm(form, { defaultValues: { password: '', confirm: '' } });
  const onSubmit = f.handleSubmit((values) =>
    api
      .post('/auth/accept-invitation', { token, password: values.password })
      .then(async () => {
        queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== meQueryKey[0] });
        await queryClient.refetchQueries({ queryKey: meQueryKey });
        await navigate({ to: '/patients' });
      })
      .catch((error) => {
        if (error instanceof ApiError && ENDED[error.code]) return setEnded(ENDED[error.code]);
        if (error instanceof ApiError && error.status === 404) return setEnded('This invitation link is not valid.');
        applyProblem(f, error, { weak_password: 'password' });
      }),
  );
  return (
    <PublicCard title="Join your team on Atrium" intro="Choose a password for your new account.">
      {ended ? (
        <div className="notice notice-info" role="alert" data-testid="invitation-ended">
          <p>{ended}</p>
          <Link to="/" className="button button-secondary">
            Go to sign-in
          </Link>
        </div>
      ) : (
        <form className="form" onSubmit={onSubmit} noValidate data-testid="accept-invitation-form">
          <FormError message={f.formState.errors.root?.message} />
          <TextInput
            control={f.control}
            name="password"
            label="Password"
            type="password"
            autoComplete="new-password"
            description="At least 12 characters; common or easily guessed passwords are refused."
            isRequired
          />
          <TextInput
            control={f.control}
            name="confirm"
            label="Password again"
            type="password"
            autoComplete="new-password"
            isRequired
          />
          <Button type="submit" className="button-block" isDisabled={f.formState.isSubmitting}>
            Create my account
          </Button>
        </form>
      )}
    </PublicCard>
  );
}
