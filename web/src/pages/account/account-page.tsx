/** Your account: who you are here, change password, and your API tokens (secret shown once). */
import { useRef, useState } from 'react';
import { z } from 'zod';
import { EmptyState, ErrorNotice, Loading } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { CopyButton } from '../../components/ui/copy-button.js';
import { AppDialog } from '../../components/ui/dialog.js';
import { applyProblem, FormError, TextInput, useZodForm } from '../../components/ui/form.js';
import { notifySuccess } from '../../components/ui/toast.js';
import { useCurrentMe } from '../../me-context.js';
import { type ApiToken, useChangePassword, useCreateToken, useMyTokens, useRevokeMyToken } from '../admin/admin-api.js';
import { lastUsedWords, RevokeTokenDialog, refocusIfLost, tokenIdSuffix } from '../admin/revoke-token-dialog.js';
import { formatDateTime } from '../patients/patients-api.js';

export function AccountPage() {
  const me = useCurrentMe();
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <div>
          <h1 id="page-title">Your account</h1>
          <p className="muted">
            {me.user.name} · {me.user.email} · {me.role === 'admin' ? 'Admin' : 'Member'} of {me.workspace.name}
          </p>
        </div>
      </header>
      <div className="split">
        <TokensCard />
        <PasswordCard />
      </div>
    </section>
  );
}

export const newPasswordRule = z
  .string()
  .min(12, 'Use at least 12 characters')
  .max(200, 'Keep it to 200 characters or fewer');

const passwordForm = z
  .object({
    currentPassword: z.string().min(1, 'Enter your current password'),
    newPassword: newPasswordRule,
    confirm: z.string(),
  })
  .refine((v) => v.newPassword === v.confirm, { path: ['confirm'], message: 'The two new passwords differ' });

function PasswordCard() {
  const change = useChangePassword();
  const form = useZodForm(passwordForm, { defaultValues: { currentPassword: '', newPassword: '', confirm: '' } });
  const onSubmit = form.handleSubmit((values) =>
    change
      .mutateAsync({ currentPassword: values.currentPassword, newPassword: values.newPassword })
      .then(() => {
        notifySuccess('Password changed.');
        form.reset();
      })
      .catch((error) => applyProblem(form, error, { wrong_password: 'currentPassword', weak_password: 'newPassword' })),
  );
  return (
    <section className="card panel" aria-labelledby="password-title">
      <h2 id="password-title">Change password</h2>
      <form className="form" onSubmit={onSubmit} noValidate data-testid="password-form">
        <FormError message={form.formState.errors.root?.message} />
        <TextInput
          control={form.control}
          name="currentPassword"
          label="Current password"
          type="password"
          autoComplete="current-password"
          isRequired
        />
        <TextInput
          control={form.control}
          name="newPassword"
          label="New password"
          type="password"
          autoComplete="new-password"
          description="At least 12 characters; common or easily guessed passwords are refused."
          isRequired
        />
        <TextInput
          control={form.control}
          name="confirm"
          label="New password again"
          type="password"
          autoComplete="new-password"
          isRequired
        />
        <div className="form-actions">
          <Button type="submit" isDisabled={form.formState.isSubmitting} data-testid="change-password">
            Change password
          </Button>
        </div>
      </form>
    </section>
  );
}

const tokenForm = z.object({ name: z.string().trim().min(1, 'Name the token after what will use it').max(100) });

function TokensCard() {
  const tokens = useMyTokens();
  const create = useCreateToken();
  const revoke = useRevokeMyToken();
  const [revoking, setRevoking] = useState<ApiToken | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const [secret, setSecret] = useState<{ name: string; token: string } | null>(null);
  const form = useZodForm(tokenForm, { defaultValues: { name: '' } });
  const closeSecret = () => {
    setSecret(null);
    form.reset();
  };
  const onSubmit = form.handleSubmit((values) =>
    create
      .mutateAsync(values.name)
      // The field is emptied when the dialog closes, not now: emptied while it still had the focus, the dialog's
      // taking the focus read as leaving an empty field, and the form said "Name the token…" after a success.
      .then((created) => setSecret({ name: created.name, token: created.token }))
      .catch((error) => applyProblem(form, error)),
  );
  return (
    <section className="card panel" aria-labelledby="tokens-title" id="tokens">
      <h2 id="tokens-title" tabIndex={-1} ref={heading}>
        API tokens
      </h2>
      <p className="muted">
        A token acts as you in this workspace, for scripts and integrations: send it as{' '}
        <code>Authorization: Bearer …</code>.
      </p>
      <form className="form inline-form" onSubmit={onSubmit} noValidate>
        <FormError message={form.formState.errors.root?.message} />
        <TextInput control={form.control} name="name" label="New token name" placeholder="Billing export" />
        <div>
          <Button type="submit" isDisabled={form.formState.isSubmitting} data-testid="create-token">
            Create token
          </Button>
        </div>
      </form>
      <AppDialog
        title="Copy your new token now"
        description="This is the only time it is shown. Store it in your password manager or secret store."
        isOpen={secret !== null}
        onOpenChange={(open) => !open && closeSecret()}
        testId="token-secret-dialog"
      >
        {secret ? <SecretValue label={secret.name} value={secret.token} /> : null}
        <div className="form-actions">
          <Button onPress={closeSecret}>I have copied it</Button>
        </div>
      </AppDialog>
      {tokens.isPending ? <Loading label="Loading tokens…" /> : null}
      {tokens.isError ? <ErrorNotice error={tokens.error} onRetry={() => tokens.refetch()} /> : null}
      {tokens.isSuccess && tokens.data.items.length === 0 ? (
        <EmptyState title="No tokens">Create one for each script or system that calls the API.</EmptyState>
      ) : null}
      {tokens.isSuccess && tokens.data.items.length > 0 ? (
        <ul className="card-list" data-testid="my-tokens">
          {tokens.data.items.map((t) => (
            <TokenItem
              key={t.id}
              token={t}
              onRevoke={() => {
                revoke.reset();
                setRevoking(t);
              }}
            />
          ))}
        </ul>
      ) : null}
      <RevokeTokenDialog
        key={revoking?.id}
        token={revoking}
        title={revoking ? `Revoke “${revoking.name}”?` : ''}
        revoke={revoke}
        onClose={() => {
          setRevoking(null);
          refocusIfLost(heading);
        }}
      />
    </section>
  );
}

/** A new token's secret, shown once, with the shared Copy button (a toast says it was copied, or how to copy by hand). */
export function SecretValue({ label, value }: { label: string; value: string }) {
  return (
    <div className="secret-box">
      <span className="muted">{label}</span>
      <code className="secret-value" data-testid="token-secret">
        {value}
      </code>
      <CopyButton text={value} label={`token ${label}`} testId="copy-token-secret" />
    </div>
  );
}

function TokenItem({ token, onRevoke }: { token: ApiToken; onRevoke: () => void }) {
  return (
    <li className="item-card token-item" data-testid="token-item">
      <div className="item-card-top">
        <strong>{token.name}</strong>
        <Button
          variant="secondary"
          size="small"
          onPress={onRevoke}
          data-testid="revoke-token"
          aria-label={`Revoke ${token.name} ${tokenIdSuffix(token)}`}
        >
          Revoke
        </Button>
      </div>
      {/* As on the admin page: the end of its id and its last use tell apart tokens of one name. */}
      <span className="muted">
        Created {formatDateTime(token.createdAt)} ·{' '}
        <span title={token.id} className="nowrap">
          {tokenIdSuffix(token)}
        </span>{' '}
        · <span className="nowrap">{lastUsedWords(token)}</span>
      </span>
    </li>
  );
}
