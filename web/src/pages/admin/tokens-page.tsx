/** Every API token of the workspace (admins): who owns it, when it was last used; revoke. Never the secret. */
import { useRef, useState } from 'react';
import { EmptyState, ErrorNotice, Loading } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { formatDateTime } from '../patients/patients-api.js';
import { type ApiToken, useAdminTokens, useRevokeAdminToken } from './admin-api.js';
import { RevokeTokenDialog, refocusIfLost, tokenIdSuffix } from './revoke-token-dialog.js';

export function AdminTokensPage() {
  const tokens = useAdminTokens();
  const revoke = useRevokeAdminToken();
  const [revoking, setRevoking] = useState<ApiToken | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <div>
          <h1 id="page-title" tabIndex={-1} ref={heading}>
            API tokens
          </h1>
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
                  <TokenRow
                    key={t.id}
                    token={t}
                    onRevoke={() => {
                      revoke.reset();
                      setRevoking(t);
                    }}
                  />
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </div>
      <RevokeTokenDialog
        key={revoking?.id}
        token={revoking}
        title={revoking ? `Revoke “${revoking.name}” of ${revoking.userName}?` : ''}
        revoke={revoke}
        onClose={() => {
          setRevoking(null);
          refocusIfLost(heading);
        }}
      />
    </section>
  );
}

function TokenRow({ token, onRevoke }: { token: ApiToken; onRevoke: () => void }) {
  return (
    <tr data-testid="admin-token-row">
      <th scope="row" className="cell-name">
        {token.name}
        {/* The end of its id tells apart tokens of one name (the same id is in the audit log). */}
        <span className="muted cell-sub">
          Created {formatDateTime(token.createdAt)} ·{' '}
          <span title={token.id} className="nowrap">
            {tokenIdSuffix(token)}
          </span>
        </span>
      </th>
      <td data-label="Owner">{token.userName}</td>
      <td className="muted nowrap col-updated" data-label="Last used">
        {token.lastUsedAt ? formatDateTime(token.lastUsedAt) : 'Never'}
      </td>
      <td className="cell-actions">
        <Button
          variant="secondary"
          size="small"
          onPress={onRevoke}
          data-testid="revoke-token"
          aria-label={`Revoke ${token.name} ${tokenIdSuffix(token)} of ${token.userName}`}
        >
          Revoke
        </Button>
      </td>
    </tr>
  );
}
