/**
 * `/accept-invitation?token=`: the invited person joins the workspace and is signed in. A new account chooses its
 * password; someone who already has one (a member removed and invited again, or one of another workspace) is asked
 * for it once, with a way to reset it. The page learns which from `GET /auth/invitation`.
 */
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { z } from 'zod';
import { ApiError, api, moveSession } from '../../api.js';
import { Loading } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { applyProblem, FormError, TextInput, useZodForm } from '../../components/ui/form.js';
import { meQueryKey } from '../../session.js';
import { newPasswordRule } from '../account/account-page.js';
import { ForgotPassword } from '../sign-in/forgot-password.js';
import { NewPasswordFields } from './new-password-fields.js';
import { PublicCard } from './public-card.js';

/** What `GET /auth/invitation` tells the invited person before they accept. */
interface InvitationLookup {
  workspace: { name: string };
  email: string;
  /** The account already has a password: accepting asks for it. */
  existingAccount: boolean;
}

const newAccountForm = z
  .object({ password: newPasswordRule, confirm: z.string() })
  .refine((v) => v.password === v.confirm, { path: ['confirm'], message: 'The two passwords differ' });

const existingAccountForm = z.object({ password: z.string().min(1, 'Enter your password') });

const ENDED: Record<string, string> = {
  invitation_used: 'This invitation has already been accepted. Sign in with the password you chose.',
  invitation_expired: 'This invitation has expired. Ask an admin of the workspace to invite you again.',
};

/**
 * A link the server does not know (404): replaced by a later invitation of the same address, cancelled, or mistyped.
 * Said before any password is asked for, with what to do.
 */
const NOT_VALID =
  'This invitation link no longer works: a newer invitation may have replaced it, or it was cancelled. Open the ' +
  'latest invitation e-mail from the workspace, or ask one of its admins to invite you again.';

const WRONG_PASSWORD = 'That is not the password of this account. Try again, or reset it below.';

/** A used, expired or unknown invitation (from the lookup or the accept call), in words; else null. */
function endedWords(error: unknown): string | null {
  if (!(error instanceof ApiError)) return null;
  if (ENDED[error.code]) return ENDED[error.code];
  return error.status === 404 ? NOT_VALID : null;
}

export function AcceptInvitationPage({ token }: { token: string }) {
  const lookup = useQuery({
    queryKey: ['invitation', token],
    enabled: token !== '',
    queryFn: ({ signal }) => api.get<InvitationLookup>('/auth/invitation', { token }, signal),
    retry: false,
    staleTime: Number.POSITIVE_INFINITY,
  });
  // The accept call may learn later than the lookup that the account has a password (set meanwhile).
  const [hasPassword, setHasPassword] = useState(false);
  const [ended, setEnded] = useState<string | null>(null);
  const endedNow = token
    ? (ended ?? endedWords(lookup.error))
    : 'This link is incomplete: open it again from the e-mail.';
  const invitation = lookup.data;
  const existing = hasPassword || invitation?.existingAccount === true;
  const title = invitation ? `Join ${invitation.workspace.name} on Atrium` : 'Join your team on Atrium';
  const intro = endedNow
    ? undefined
    : existing
      ? `Enter your password to join ${invitation?.workspace.name ?? 'the workspace'}.`
      : invitation
        ? `Choose a password for your new account. You sign in with ${invitation.email}.`
        : 'Choose a password for your new account.';
  return (
    <PublicCard title={title} intro={intro}>
      {endedNow ? (
        <div className="notice notice-info" role="alert" data-testid="invitation-ended">
          <p>{endedNow}</p>
          <Link to="/" className="button button-secondary">
            Go to sign-in
          </Link>
        </div>
      ) : lookup.isPending && token ? (
        <Loading label="Opening your invitation…" />
      ) : existing ? (
        <ExistingAccountForm token={token} email={invitation?.email} onEnded={setEnded} />
      ) : (
        // Also when the lookup failed otherwise (no answer): the accept call then says what is wrong.
        <NewAccountForm
          token={token}
          email={invitation?.email}
          onEnded={setEnded}
          onHasPassword={() => setHasPassword(true)}
        />
      )}
    </PublicCard>
  );
}

/** Signed in by the accept call: the app opens on the new workspace. */
function useSignedIn() {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  return async () => {
    queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== meQueryKey[0] });
    await queryClient.refetchQueries({ queryKey: meQueryKey });
    await navigate({ to: '/patients' });
  };
}

function NewAccountForm({
  token,
  email,
  onEnded,
  onHasPassword,
}: {
  token: string;
  email?: string;
  onEnded: (words: string) => void;
  onHasPassword: () => void;
}) {
  const signedIn = useSignedIn();
  const f = useZodForm(newAccountForm, { defaultValues: { password: '', confirm: '' } });
  const onSubmit = f.handleSubmit((values) =>
    // Signed in to the invitation's workspace: this tab follows the session there.
    moveSession(() => api.post('/auth/accept-invitation', { token, password: values.password }))
      .then(signedIn)
      .catch((error) => {
        const words = endedWords(error);
        if (words) return onEnded(words);
        // The account has a password after all: ask for that one instead.
        if (error instanceof ApiError && error.status === 401) return onHasPassword();
        applyProblem(f, error, { weak_password: 'password' });
      }),
  );
  return (
    <form className="form" onSubmit={onSubmit} noValidate data-testid="accept-invitation-form">
      <FormError message={f.formState.errors.root?.message} />
      {/* The account's e-mail, for the browser's password manager to save the new password with its login. */}
      {email ? <input type="email" name="email" autoComplete="username" value={email} readOnly hidden /> : null}
      <NewPasswordFields control={f.control} label="Password" />
      <Button type="submit" className="button-block" isDisabled={f.formState.isSubmitting}>
        Create my account
      </Button>
    </form>
  );
}

function ExistingAccountForm({
  token,
  email,
  onEnded,
}: {
  token: string;
  email?: string;
  onEnded: (words: string) => void;
}) {
  const signedIn = useSignedIn();
  const f = useZodForm(existingAccountForm, { defaultValues: { password: '' } });
  const onSubmit = f.handleSubmit((values) =>
    // Signed in to the invitation's workspace: this tab follows the session there.
    moveSession(() => api.post('/auth/accept-invitation', { token, password: values.password }))
      .then(signedIn)
      .catch((error) => {
        const words = endedWords(error);
        if (words) return onEnded(words);
        if (error instanceof ApiError && error.status === 401) {
          return f.setError('password', { message: WRONG_PASSWORD }, { shouldFocus: true });
        }
        applyProblem(f, error);
      }),
  );
  return (
    <>
      <form className="form" onSubmit={onSubmit} noValidate data-testid="accept-invitation-form">
        <FormError message={f.formState.errors.root?.message} />
        {/* The account's e-mail, for the browser's password manager to find the saved password. */}
        {email ? <input type="email" name="email" autoComplete="username" value={email} readOnly hidden /> : null}
        <TextInput
          control={f.control}
          name="password"
          label="Your password"
          type="password"
          autoComplete="current-password"
          description={email ? `The password you sign in to Atrium with as ${email}.` : undefined}
          isRequired
        />
        <Button type="submit" className="button-block" isDisabled={f.formState.isSubmitting}>
          Join the workspace
        </Button>
      </form>
      <ForgotPassword />
    </>
  );
}
