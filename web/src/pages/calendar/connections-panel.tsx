/** Connected accounts: status of each, connect Google or Microsoft, reconnect, disconnect. */
import { useState } from 'react';
import { ApiError, describeError } from '../../api.js';
import { Button } from '../../components/ui/button.js';
import { ConfirmDialog } from '../../components/ui/dialog.js';
import { notifyError, notifySuccess } from '../../components/ui/toast.js';
import { useCurrentMe } from '../../me-context.js';
import { type Connection, PROVIDER_LABEL, type Provider, useConnect, useDisconnect } from './calendar-api.js';

export function ConnectionsPanel({
  connections,
  canAddMore,
  othersShown = false,
}: {
  connections: Connection[];
  canAddMore: boolean;
  /** The week shows colleagues' calendars the reader did not connect. */
  othersShown?: boolean;
}) {
  const connect = useConnect();
  const disconnect = useDisconnect();
  const me = useCurrentMe();
  const [removing, setRemoving] = useState<Connection | null>(null);

  const start = (provider: Provider, connectionId?: string) =>
    connect.mutate(
      { provider, connectionId },
      {
        onError: (error) =>
          notifyError(
            error,
            error instanceof ApiError && error.code === 'tier_required'
              ? `The Free plan includes one calendar connection; the Standard plan connects more. ${
                  me.role === 'admin' ? 'Your Atrium contact changes your plan.' : 'Ask an admin to change the plan.'
                }`
              : describeError(error),
          ),
      },
    );

  return (
    <section className="card calendar-connections" aria-labelledby="connections-title" data-testid="connections-panel">
      <h2 id="connections-title">Connected calendars</h2>
      {connections.length === 0 ? (
        <p className="muted">
          {othersShown
            ? 'The calendars shown are your colleagues’. Connect your own Google or Microsoft account to add yours.'
            : 'Connect a Google or Microsoft account to see its calendars here.'}
        </p>
      ) : null}
      <ul className="connection-list">
        {connections.map((c) => (
          <li key={c.id} className="connection" data-testid="connection">
            <div>
              <strong>{PROVIDER_LABEL[c.provider]}</strong> <span className="muted">{c.accountEmail}</span>
              <div>
                {c.status === 'active' ? (
                  <span className="connection-status connection-ok">Connected</span>
                ) : (
                  <span className="connection-status connection-warn" data-testid="needs-reconnect">
                    Needs you to sign in again
                  </span>
                )}
              </div>
            </div>
            <div className="connection-actions">
              {c.status === 'reauth_required' ? (
                <Button size="small" onPress={() => start(c.provider, c.id)} isDisabled={connect.isPending}>
                  Reconnect
                </Button>
              ) : null}
              <Button
                size="small"
                variant="ghost"
                onPress={() => setRemoving(c)}
                aria-label={`Disconnect ${PROVIDER_LABEL[c.provider]} ${c.accountEmail}`}
              >
                Disconnect
              </Button>
            </div>
          </li>
        ))}
      </ul>
      <div className="connect-buttons">
        <Button
          variant="secondary"
          size="small"
          onPress={() => start('google')}
          isDisabled={connect.isPending || !canAddMore}
          data-testid="connect-google"
        >
          Connect Google
        </Button>
        <Button
          variant="secondary"
          size="small"
          onPress={() => start('microsoft')}
          isDisabled={connect.isPending || !canAddMore}
          data-testid="connect-microsoft"
        >
          Connect Microsoft
        </Button>
      </div>
      {!canAddMore ? <p className="field-hint">Your plan includes one calendar connection.</p> : null}
      <ConfirmDialog
        title="Disconnect this calendar?"
        description={`Atrium forgets the tokens for ${removing?.accountEmail ?? ''}; its events stop showing here. Nothing is deleted at ${removing ? PROVIDER_LABEL[removing.provider] : 'the provider'}.`}
        confirmLabel="Disconnect"
        isOpen={removing !== null}
        onOpenChange={(open) => (!open ? setRemoving(null) : undefined)}
        pending={disconnect.isPending}
        onConfirm={() =>
          removing &&
          disconnect.mutate(removing.id, {
            onSuccess: () => {
              notifySuccess('Disconnected', removing.accountEmail);
              setRemoving(null);
            },
            onError: (error) => notifyError(error),
          })
        }
      />
    </section>
  );
}
