/** Admin → Webhooks: endpoints (create, enable/disable, rotate, delete), a delivery log per endpoint, the inbox. */

import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { ApiError } from '../../api.js';
import { focusLost } from '../../components/focus.js';
import { PlanNotice } from '../../components/plan-notice.js';
import { EmptyState, ErrorNotice, Loading } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { AppDialog, ConfirmDialog } from '../../components/ui/dialog.js';
import { notifyError, notifySuccess } from '../../components/ui/toast.js';
import { useCurrentMe } from '../../me-context.js';
import { DeliveryLog } from './delivery-log.js';
import { EndpointForm } from './endpoint-form.js';
import { eventWords } from './event-words.js';
import { InboxList } from './inbox-list.js';
import { SecretReveal } from './secret-reveal.js';
import {
  type Endpoint,
  formatDateTime,
  useDeleteEndpoint,
  useEndpoints,
  useRotateSecret,
  useSendTestEvent,
  useUpdateEndpoint,
} from './webhooks-api.js';
import './webhooks.css';

/** A long URL in running text: lets it wrap after its separators (the confirm dialog is narrow on a phone). */
function breakable(url: string): string {
  return url.replace(/([/.?&=_-])/g, '$1\u200b');
}

/** A signing secret on screen, and the endpoint it signs for. */
interface ShownSecret {
  endpointId: string;
  title: string;
  value: string;
}

/**
 * The page of `/admin/webhooks` and of its child `/admin/webhooks/$endpointId` (the endpoint whose log is open).
 * It stays mounted while the admin moves between endpoints, so a secret shown once stays until they press
 * "I have stored it". It lives in this component's memory only (never storage or the URL); another workspace
 * gets a page of its own (keyed), so a secret never shows in a workspace it does not belong to.
 */
export function WebhooksPage() {
  const me = useCurrentMe();
  const { endpointId } = useParams({ strict: false });
  return <WorkspaceWebhooks key={me.workspace.id} endpointId={endpointId} />;
}

function WorkspaceWebhooks({ endpointId }: { endpointId?: string }) {
  const endpoints = useEndpoints();
  const [secret, setSecret] = useState<ShownSecret | null>(null);
  /** The endpoint whose link was just followed: its log comes into view with the focus (below the form on a phone). */
  const [reveal, setReveal] = useState<string | null>(null);

  const tierError =
    endpoints.error instanceof ApiError && endpoints.error.code === 'tier_required' ? endpoints.error : null;
  const selected = endpoints.data?.items.find((e) => e.id === endpointId);
  const endpointsHeading = useRef<HTMLHeadingElement>(null);
  /** The endpoint just deleted and where it stood, until the list read again no longer has it. */
  const deleted = useRef<{ id: string; index: number } | null>(null);
  useEffect(() => {
    const gone = deleted.current;
    const items = endpoints.data?.items;
    if (!gone || !items || items.some((e) => e.id === gone.id)) return;
    deleted.current = null;
    // Its row (and the Delete the confirmation gave the focus back to) went: the next endpoint's Delete (the one
    // before it for the last), or the list's heading once none is left, rather than the page.
    setTimeout(() => {
      if (!focusLost()) return;
      const buttons = [...document.querySelectorAll<HTMLElement>('[data-testid="delete-endpoint"]')];
      (buttons[gone.index] ?? buttons.at(-1) ?? endpointsHeading.current)?.focus();
    }, 50);
  }, [endpoints.data]);

  return (
    <section className="page webhooks-page" aria-labelledby="page-title">
      <header className="page-header">
        <div>
          <h1 id="page-title">Webhooks</h1>
          <p className="muted">Signed event deliveries to your systems, retried until they land.</p>
        </div>
      </header>
      {tierError ? (
        <PlanNotice feature="outbound_webhooks" title="Webhooks come with the Advanced plan" testId="tier-notice">
          Webhooks send a signed message to your own systems (billing, records, a data warehouse) the moment something
          happens in Atrium: a new patient, a booked or cancelled appointment, a signed note, a claim.
        </PlanNotice>
      ) : (
        <>
          {secret ? (
            <SecretReveal title={secret.title} secret={secret.value} onDismiss={() => setSecret(null)} />
          ) : null}
          <div className="webhooks-grid">
            <section className="card" aria-labelledby="endpoints-title">
              <div className="toolbar">
                <h2 id="endpoints-title" tabIndex={-1} ref={endpointsHeading}>
                  Endpoints
                </h2>
              </div>
              {endpoints.isPending ? <Loading label="Loading endpoints…" /> : null}
              {endpoints.isError ? <ErrorNotice error={endpoints.error} onRetry={() => endpoints.refetch()} /> : null}
              {endpoints.isSuccess && endpoints.data.items.length === 0 ? (
                <EmptyState title="No endpoints yet">Add one to start receiving events.</EmptyState>
              ) : null}
              {endpoints.isSuccess && endpoints.data.items.length > 0 ? (
                <EndpointTable
                  endpoints={endpoints.data.items}
                  selectedId={endpointId}
                  onOpen={setReveal}
                  onSecret={setSecret}
                  onDeleted={(e) => {
                    deleted.current = { id: e.id, index: endpoints.data?.items.findIndex((x) => x.id === e.id) ?? 0 };
                    notifySuccess(`Deleted ${e.url}; its pending deliveries were cancelled.`);
                    // The secret of a deleted endpoint signs nothing any more.
                    setSecret((shown) => (shown?.endpointId === e.id ? null : shown));
                  }}
                />
              ) : null}
            </section>
            <section className="card panel" aria-labelledby="new-endpoint-title">
              <h2 id="new-endpoint-title">Add an endpoint</h2>
              <EndpointForm
                onCreated={(endpoint) => {
                  setSecret({
                    endpointId: endpoint.id,
                    title: `Endpoint created: ${endpoint.url}`,
                    value: endpoint.secret,
                  });
                }}
              />
            </section>
          </div>
          {endpointId && endpoints.isSuccess && !selected ? (
            <ErrorNotice
              error={new Error('This endpoint does not exist in this workspace.')}
              title="Endpoint not found"
            />
          ) : null}
          {selected ? (
            <DeliveryLog
              key={selected.id}
              endpoint={selected}
              reveal={reveal === selected.id}
              onRevealed={() => setReveal(null)}
            />
          ) : null}
          <InboxList endpoints={endpoints.data?.items ?? []} onOpenEndpoint={setReveal} />
        </>
      )}
    </section>
  );
}

function EndpointTable({
  endpoints,
  selectedId,
  onOpen,
  onSecret,
  onDeleted,
}: {
  endpoints: Endpoint[];
  selectedId?: string;
  onOpen: (endpointId: string) => void;
  onSecret: (secret: ShownSecret) => void;
  onDeleted: (endpoint: Endpoint) => void;
}) {
  const update = useUpdateEndpoint();
  const remove = useDeleteEndpoint();
  const sendTest = useSendTestEvent();
  const navigate = useNavigate();
  const rotate = useRotateSecret();
  const [deleting, setDeleting] = useState<Endpoint | null>(null);
  const [editing, setEditing] = useState<Endpoint | null>(null);
  const [rotating, setRotating] = useState<Endpoint | null>(null);
  const error = update.error ?? remove.error;

  return (
    <div className="table-wrap">
      {error ? <ErrorNotice error={error} title="That did not work" /> : null}
      <table className="table stack-table endpoint-table">
        <thead>
          <tr>
            <th scope="col">Endpoint</th>
            <th scope="col">Events</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {endpoints.map((e) => (
            <tr
              key={e.id}
              className={e.id === selectedId ? 'selected' : undefined}
              data-testid="endpoint-row"
              data-endpoint-id={e.id}
            >
              <td className="endpoint-cell" data-label="Endpoint">
                <Link
                  to="/admin/webhooks/$endpointId"
                  params={{ endpointId: e.id }}
                  className="cell-mono break endpoint-link"
                  data-testid="endpoint-link"
                  // The log is brought into view by DeliveryLog; the router's reset to the top would undo it.
                  resetScroll={false}
                  onClick={() => onOpen(e.id)}
                >
                  {e.url}
                </Link>
                {e.description ? <div className="muted">{e.description}</div> : null}
                {e.previousSecretExpiresAt ? (
                  <div className="muted">Old secret also signs until {formatDateTime(e.previousSecretExpiresAt)}</div>
                ) : null}
                <div className="endpoint-actions">
                  <Button
                    variant="secondary"
                    size="small"
                    isPending={sendTest.isPending && sendTest.variables === e.id}
                    data-testid="send-test"
                    onPress={() =>
                      sendTest.mutate(e.id, {
                        onSuccess: () => {
                          notifySuccess('Test event sent', `A signed webhook.test event is on its way to ${e.url}.`);
                          // Show the endpoint's log, where the attempt appears (the log refreshes itself).
                          if (e.id !== selectedId) {
                            void navigate({ to: '/admin/webhooks/$endpointId', params: { endpointId: e.id } });
                          }
                        },
                        onError: (error) => notifyError(error, 'Could not send the test event'),
                      })
                    }
                  >
                    Send test event
                  </Button>
                  <Button variant="secondary" size="small" onPress={() => setEditing(e)} data-testid="edit-endpoint">
                    Edit
                  </Button>
                  <Button
                    variant="secondary"
                    size="small"
                    isPending={update.isPending && update.variables?.id === e.id}
                    onPress={() =>
                      update.mutate(
                        { id: e.id, enabled: !e.enabled },
                        {
                          onSuccess: () =>
                            e.enabled
                              ? notifySuccess(
                                  `Disabled ${e.url}`,
                                  'It receives no events until you enable it again, and will not get the ones it missed.',
                                )
                              : notifySuccess(`Enabled ${e.url}`, 'Events are sent to it again.'),
                        },
                      )
                    }
                  >
                    {e.enabled ? 'Disable' : 'Enable'}
                  </Button>
                  <Button
                    variant="secondary"
                    size="small"
                    isPending={rotate.isPending && rotate.variables === e.id}
                    onPress={() => {
                      rotate.reset();
                      setRotating(e);
                    }}
                  >
                    Rotate secret
                  </Button>
                  <Button
                    variant="secondary"
                    size="small"
                    onPress={() => setDeleting(e)}
                    data-testid="delete-endpoint"
                    aria-label={`Delete ${e.url}`}
                  >
                    Delete
                  </Button>
                </div>
              </td>
              <td data-label="Events">
                {e.events.includes('*') ? (
                  'All events'
                ) : (
                  <ul className="event-list">
                    {e.events.map((t) => (
                      <li key={t}>
                        {eventWords(t)} <code className="muted event-code">{t}</code>
                      </li>
                    ))}
                  </ul>
                )}
              </td>
              <td className="nowrap" data-label="State">
                <span className={`badge ${e.enabled ? 'badge-ok' : 'badge-muted'}`} data-testid="endpoint-state">
                  {e.enabled ? 'Enabled' : 'Disabled'}
                </span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <AppDialog
        title="Edit endpoint"
        description="Its secret, its delivery log and its failed events stay: Replay sends them to the URL saved here."
        isOpen={editing !== null}
        onOpenChange={(open) => !open && setEditing(null)}
        testId="edit-endpoint-dialog"
      >
        {editing ? (
          <EndpointForm
            key={editing.id}
            endpoint={editing}
            onCancel={() => setEditing(null)}
            onSaved={(saved) => {
              setEditing(null);
              notifySuccess('Endpoint saved', saved.url);
            }}
          />
        ) : null}
      </AppDialog>
      <ConfirmDialog
        title="Replace the signing secret?"
        description={
          rotating
            ? `${breakable(rotating.url)} gets a new signing secret, shown once. The old one keeps signing for 24 hours; after that the receiving system rejects our deliveries unless it uses the new one. This cannot be undone.`
            : ''
        }
        confirmLabel="Replace secret"
        confirmTestId="confirm-rotate"
        isOpen={rotating !== null}
        onOpenChange={(open) => !open && setRotating(null)}
        pending={rotate.isPending}
        error={rotate.error ?? undefined}
        errorTitle="Could not replace the secret"
        onConfirm={() => {
          const e = rotating;
          if (!e) return;
          rotate
            .mutateAsync(e.id)
            .then((r) => {
              setRotating(null);
              onSecret({
                endpointId: e.id,
                title: `New secret for ${e.url} (the old one signs for 24 hours)`,
                value: r.secret,
              });
            })
            .catch(() => {});
        }}
      />
      <ConfirmDialog
        title="Delete this endpoint?"
        description={
          deleting
            ? `${breakable(deleting.url)} stops receiving events and its pending deliveries are cancelled. This cannot be undone.`
            : ''
        }
        confirmLabel="Delete endpoint"
        confirmTestId="confirm-delete"
        isOpen={deleting !== null}
        onOpenChange={(open) => !open && setDeleting(null)}
        pending={remove.isPending}
        onConfirm={() => {
          const e = deleting;
          if (!e) return;
          // mutateAsync: the table may unmount once the list refetches (last endpoint gone).
          remove
            .mutateAsync(e.id)
            .then(() => {
              setDeleting(null);
              onDeleted(e);
              if (e.id === selectedId) void navigate({ to: '/admin/webhooks' });
            })
            .catch(() => setDeleting(null));
        }}
      />
    </div>
  );
}
