/** `/reset-password?token=`: choose a new password from the e-mailed link (valid 1 hour, once). */
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { z } from 'zod';
import { ApiError, api } from '../../api.js';
import { Button } from '../../components/ui/button.js';
import { applyProblem, FormError, useZodForm } from '../../components/ui/form.js';
import { newPasswordRule } from '../account/account-page.js';
import { NewPasswordFields } from './new-password-fields.js';
import { PublicCard } from './public-card.js';

const form = z
  .object({ password: newPasswordRule, confirm: z.string() })
  .refine((v) => v.password === v.confirm, { path: ['confirm'], message: 'The two passwords differ' });

export function ResetPasswordPage({ token }: { token: string }) {
  const [state, setState] = useState<'form' | 'done' | 'invalid'>(token ? 'form' : 'invalid');
  const f = useZodForm(form, { defaultValues: { password: '', confirm: '' } });
  const onSubmit = f.handleSubmit((values) =>
    api
      .post('/auth/password-reset/confirm', { token, password: values.password })
      .then(() => setState('done'))
      .catch((error) => {
        if (error instanceof ApiError && [400, 404, 409, 410].includes(error.status) && error.code !== 'weak_password')
          return setState('invalid');
        applyProblem(f, error, { weak_password: 'password' });
      }),
  );
  return (
    <PublicCard title="Choose a new password">
      {state === 'done' ? (
        <div className="notice notice-success" role="status" data-testid="reset-done">
          <p>Your password is changed, and every other session and API token of yours was signed out.</p>
          <Link to="/" className="button button-primary">
            Sign in
          </Link>
        </div>
      ) : null}
      {state === 'invalid' ? (
        <div className="notice notice-info" role="alert" data-testid="reset-invalid">
          <p>This link is no longer valid: it works once, for one hour. Ask for a new one from the sign-in page.</p>
          <Link to="/" className="button button-secondary">
            Go to sign-in
          </Link>
        </div>
      ) : null}
      {state === 'form' ? (
        <form className="form" onSubmit={onSubmit} noValidate data-testid="reset-form">
          <FormError message={f.formState.errors.root?.message} />
          <NewPasswordFields control={f.control} label="New password" />
          <Button type="submit" className="button-block" isDisabled={f.formState.isSubmitting}>
            Set new password
          </Button>
        </form>
      ) : null}
    </PublicCard>
  );
}
