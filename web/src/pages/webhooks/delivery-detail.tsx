/** One delivery attempt as it went over the wire (§7.1): the exact request and the receiver's answer. */
import { ErrorNotice, Loading } from '../../components/status.js';
import { CopyButton } from '../../components/ui/copy-button.js';
import { AppDialog } from '../../components/ui/dialog.js';
import { formatDateTime, useDeliveryDetail } from './webhooks-api.js';

function pretty(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

function Headers({ headers, label }: { headers: Record<string, string>; label: string }) {
  const names = Object.keys(headers).sort();
  return (
    <div className="code-block-wrap">
      <div className="detail-subhead">
        <h4>{label}</h4>
        <CopyButton text={names.map((name) => `${name}: ${headers[name]}`).join('\n')} label={label.toLowerCase()} />
      </div>
      <div className="table-wrap">
        <table className="table headers-table">
          <caption className="visually-hidden">{label}</caption>
          <thead>
            <tr>
              <th scope="col">Header</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {names.map((name) => (
              <tr key={name}>
                <th scope="row" className="cell-mono">
                  {name}
                </th>
                <td className="cell-mono break">{headers[name]}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

function Body({ text, label }: { text: string; label: string }) {
  const shown = pretty(text);
  return (
    <div className="code-block-wrap">
      <div className="detail-subhead">
        <h4>{label}</h4>
        <CopyButton text={shown} label={label.toLowerCase()} />
      </div>
      {text ? (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
        <section className="code-block" aria-label={label} tabIndex={0}>
          <pre className="code-pre">{shown}</pre>
        </section>
      ) : (
        <p className="muted">Empty body.</p>
      )}
    </div>
  );
}

export function DeliveryDetailDialog({
  endpointId,
  deliveryId,
  onClose,
}: {
  endpointId: string;
  deliveryId: string | null;
  onClose: () => void;
}) {
  const detail = useDeliveryDetail(endpointId, deliveryId);
  const d = detail.data;
  return (
    <AppDialog
      title="Delivery attempt"
      isOpen={deliveryId !== null}
      onOpenChange={(open) => !open && onClose()}
      isDismissable
      size="large"
      testId="delivery-detail"
    >
      {detail.isPending ? <Loading label="Loading the attempt…" /> : null}
      {detail.isError ? <ErrorNotice error={detail.error} onRetry={() => detail.refetch()} /> : null}
      {d ? (
        <>
          <p className="muted">
            <code>{d.eventType}</code> · attempt {d.attempt} · {formatDateTime(d.attemptedAt)} · {d.durationMs} ms ·{' '}
            <span className={`badge ${d.outcome === 'success' ? 'badge-ok' : 'badge-fail'}`}>
              {d.outcome === 'success' ? 'Delivered' : 'Failed'}
            </span>
          </p>
          {d.error ? <p className="field-error">{d.error}</p> : null}
          <section aria-labelledby="detail-request" className="detail-section" data-testid="detail-request">
            <h3 id="detail-request">Request</h3>
            {d.request ? (
              <>
                <div className="detail-subhead">
                  <p className="cell-mono break" data-testid="detail-url">
                    <strong>POST</strong> {d.request.url}
                  </p>
                  <CopyButton text={d.request.url} label="URL" />
                </div>
                <Headers headers={d.request.headers} label="Request headers" />
                <Body text={d.request.body} label="Request body" />
              </>
            ) : (
              <p className="muted">This attempt was recorded before requests were kept.</p>
            )}
          </section>
          <section aria-labelledby="detail-response" className="detail-section" data-testid="detail-response">
            <h3 id="detail-response">Response</h3>
            {d.response ? (
              <>
                <p>
                  HTTP{' '}
                  <span
                    className={`badge ${d.response.status < 300 ? 'badge-ok' : 'badge-fail'}`}
                    data-testid="detail-status"
                  >
                    {d.response.status}
                  </span>{' '}
                  <span className="muted">in {d.durationMs} ms</span>
                </p>
                <Headers headers={d.response.headers} label="Response headers" />
                <Body text={d.response.body} label="Response body" />
                {d.response.truncated ? <p className="muted">Only the first 4 KiB of the answer are kept.</p> : null}
              </>
            ) : (
              <p className="muted">No answer came back: {d.error ?? 'the request did not complete'}.</p>
            )}
          </section>
        </>
      ) : null}
    </AppDialog>
  );
}
