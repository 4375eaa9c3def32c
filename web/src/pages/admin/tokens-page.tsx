/** Every API token of the workspace (admins): who owns it, when it was last used; revoke. Never the secret. */
import { useState } from 'react';
import { EmptyState, ErrorNotice, Loading } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { ConfirmDialog } from '../../components/ui/dialog.js';
import { notifySuccess } from '../../components/ui/toast.js';
import { formatDateTime } from '../patients/patients-api.js';
import { type ApiToken, useAdminTokens, useRevokeAdminToken } from './admin-api.js';

export function AdminTokensPage() {
  const tokens = useAdminTokens();
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <div>
          <h1 id="page-title">API tokens</h1>
          <p className="muted">Every token of this workspace. Members create their own under Account.</p>
        </div>
      </header>
      <div className="card">
        {tokens.isPending ? <Loading label="Loading tokens…" /> : null}
        {tokens.isError ? <ErrorNotice error={tokens.error} onRetry={() => tokens.refetch()} /> : null}
        {tokens.isSuccess && tokens.data.items.length === 0 ? (
          <EmptyState title="No API tokens">Nobody in this workspace has created one.</EmptyState>
        ) : null}
        {tokens.isSuccess && tokens.data.items.length > 0 ? (
          <div className="table-wrap">
            <table className="table table-stack" data-testid="admin-tokens">
              <caption className="visually-hidden">API tokens of this workspace</caption>
              <thead>
                <tr>
                  <th scope="col">Token</th>
                  <th scope="col">Owner</th>
                  <th scope="col" className="col-updated">
                    Last used
                  </th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {tokens.data.items.map((t) => (
                  <TokenRow key={t.id} token={t} />
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </div>
    </section>
  );
}

function TokenRow({ token }: { token: ApiToken }) {
  const revoke = useRevokeAdminToken();
  const [confirming, setConfirming] = useState(false);
  return (
    <tr data-testid="admin-token-row">
      <th scope="row" className="cell-name">
        {token.name}
        {/* The end of its id tells apart tokens of one name (the same id is in the audit log). */}
        <span className="muted cell-sub">
          Created {formatDateTime(token.createdAt)} · <span title={token.id}>…{token.id.slice(-6)}</span>
        </span>
      </th>
      <td data-label="Owner">{token.userName}</td>
      <td className="muted nowrap col-updated" data-label="Last used">
        {token.lastUsedAt ? formatDateTime(token.lastUsedAt) : 'Never'}
      </td>
      <td className="cell-actions">
        <Button variant="secondary" size="small" onPress={() => setConfirming(true)} data-testid="revoke-token">
          Revoke
        </Button>
        <ConfirmDialog
          title={`Revoke “${token.name}” of ${token.userName}?`}
          description="Anything using it gets 401 from the next request."
          confirmLabel="Revoke"
          isOpen={confirming}
          onOpenChange={setConfirming}
          pending={revoke.isPending}
          confirmTestId="confirm-revoke"
          onConfirm={() =>
            revoke.mutate(token.id, {
              onSuccess: () => notifySuccess(`Token “${token.name}” revoked.`),
              onSettled: () => setConfirming(false),
            })
          }
        />
      </td>
    </tr>
  );
}
