/**
 * `/reset-password?token=`: choose a new password from the e-mailed link (valid 1 hour, once). The page first asks
 * `GET /auth/password-reset?token=`: the account's e-mail (handed to password managers) and whether it has a password
 * yet. An account that never had one (made by the Atrium team without a password) chooses its first password: the
 * page says "choose", not "reset"; as for any reset link, every session and API token of the account is revoked
 * (contract §2a; the welcome invitation is the way that revokes nothing).
 */
import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { z } from 'zod';
import { ApiError, api } from '../../api.js';
import { Loading } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { applyProblem, FormError, useZodForm } from '../../components/ui/form.js';
import { newPasswordRule } from '../account/account-page.js';
import { NewPasswordFields } from './new-password-fields.js';
import { PublicCard } from './public-card.js';

/** What `GET /auth/password-reset` tells the link's holder before they choose a password. */
interface ResetLookup {
  email: string;
  /** The account has no password yet: this is its first one. */
  firstPassword: boolean;
}

const form = z
  .object({ password: newPasswordRule, confirm: z.string() })
  .refine((v) => v.password === v.confirm, { path: ['confirm'], message: 'The two passwords differ' });

/** The link is unknown, used or expired (404, 409, 410), or malformed (400). */
const isInvalidLink = (error: unknown) =>
  error instanceof ApiError && [400, 404, 409, 410].includes(error.status) && error.code !== 'weak_password';

export function ResetPasswordPage({ token }: { token: string }) {
  const lookup = useQuery({
    queryKey: ['password-reset', token],
    enabled: token !== '',
    queryFn: ({ signal }) => api.get<ResetLookup>('/auth/password-reset', { token }, signal),
    retry: false,
    staleTime: Number.POSITIVE_INFINITY,
  });
  const [state, setState] = useState<'form' | 'done' | 'invalid'>(token ? 'form' : 'invalid');
  const shown = state === 'form' && isInvalidLink(lookup.error) ? 'invalid' : state;
  const first = lookup.data?.firstPassword === true;
  const email = lookup.data?.email;
  const f = useZodForm(form, { defaultValues: { password: '', confirm: '' } });
  const onSubmit = f.handleSubmit((values) =>
    api
      .post('/auth/password-reset/confirm', { token, password: values.password })
      .then(() => setState('done'))
      .catch((error) => {
        if (isInvalidLink(error)) return setState('invalid');
        applyProblem(f, error, { weak_password: 'password' });
      }),
  );
  const intro =
    shown === 'form' && email
      ? first
        ? `Your account ${email} has no password yet. Choose one to sign in with.`
        : `For your account ${email}.`
      : undefined;
  return (
    <PublicCard title={first ? 'Choose your password' : 'Choose a new password'} intro={intro}>
      {shown === 'done' ? (
        <div className="notice notice-success" role="status" data-testid="reset-done">
          <p>
            {first
              ? 'Your password is set, and any API token made for your account before was signed out. Sign in with your e-mail address and this password.'
              : 'Your password is changed, and every other session and API token of yours was signed out.'}
          </p>
          <Link to="/" className="button button-primary">
            Sign in
          </Link>
        </div>
      ) : null}
      {shown === 'invalid' ? (
        <div className="notice notice-info" role="alert" data-testid="reset-invalid">
          <p>This link is no longer valid: it works once, for one hour. Ask for a new one from the sign-in page.</p>
          <Link to="/" className="button button-secondary">
            Go to sign-in
          </Link>
        </div>
      ) : null}
      {shown === 'form' && lookup.isPending && token ? <Loading label="Opening your link…" /> : null}
      {shown === 'form' && !(lookup.isPending && token) ? (
        // Also when the lookup failed otherwise (no answer): the confirm call then says what is wrong.
        <form className="form" onSubmit={onSubmit} noValidate data-testid="reset-form">
          <FormError message={f.formState.errors.root?.message} />
          {/* The account's e-mail, for the browser's password manager to save the password with its login. */}
          {email ? <input type="email" name="email" autoComplete="username" value={email} readOnly hidden /> : null}
          <NewPasswordFields control={f.control} label={first ? 'Password' : 'New password'} />
          <Button type="submit" className="button-block" isDisabled={f.formState.isSubmitting}>
            {first ? 'Set password' : 'Set new password'}
          </Button>
        </form>
      ) : null}
    </PublicCard>
  );
}
