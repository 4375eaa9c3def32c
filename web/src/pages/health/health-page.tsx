/**
 * Health (admins): a card per probe with its status, SLO, last observed value, 24 h of runs as a
 * history bar and a chart of the observed value, and the incident log.
 */
import { ErrorNotice, Loading } from '../../components/status.js';
import { formatTime } from '../messages/messages-api.js';
import { type CheckStatus, checkLabel, type Dashboard, featureLabel, useDashboard } from './health-api.js';
import { Sparkline } from './sparkline.js';
import './health.css';

const STATUS_WORD: Record<CheckStatus, string> = { pass: 'Operational', warn: 'Degraded', fail: 'Failing' };

function HistoryBar({ history }: { history: Dashboard['components'][number]['history'] }) {
  // Oldest on the left; at most the last 96 runs so each stays visible.
  const runs = [...history].slice(0, 96).reverse();
  const failing = runs.filter((r) => r.status === 'fail').length;
  return (
    <div className="history-bar" role="img" aria-label={`${runs.length} runs in 24 hours, ${failing} failing`}>
      {runs.map((r) => (
        <span
          key={r.at}
          className={`history-run history-${r.status}`}
          title={`${formatTime(r.at)}: ${STATUS_WORD[r.status]}`}
        />
      ))}
    </div>
  );
}

const lower = (words: string) => words.charAt(0).toLowerCase() + words.slice(1);

/** Failing first, then degraded, then not checked yet, then working: what needs a look leads the page. */
const ORDER = { fail: 0, warn: 1, unchecked: 2, pass: 3 } as const;
const rank = (c: Dashboard['components'][number]) => ORDER[c.checkedAt ? c.status : 'unchecked'];
const cardId = (name: string) => `check-${name.replace(/[^a-z0-9-]/gi, '-')}`;

export function HealthPage() {
  const dashboard = useDashboard();
  const components = dashboard.data?.components ?? [];
  // An incident belongs to a component (`payments`): named by the feature its checks serve.
  const componentLabel = (component: string) => {
    const check = components.find((c) => c.name.startsWith(`${component}:`));
    return check ? featureLabel(check.feature) : component;
  };
  // "payments:checkout: The provider answered 500" → "Payment links: The provider answered 500".
  const summaryInWords = (summary: string) => summary.replace(/^([a-z0-9-]+:[a-z0-9-]+)(?=:)/, (id) => checkLabel(id));
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <div>
          <h1 id="page-title">Health</h1>
          <p className="muted">Every dependency Atrium checks each minute, and the incidents it opened.</p>
        </div>
        {dashboard.data ? (
          <span className={`health-pill health-${dashboard.data.status}`} data-testid="health-overall">
            {STATUS_WORD[dashboard.data.status]}
          </span>
        ) : null}
      </header>
      {dashboard.isPending ? <Loading label="Loading health…" /> : null}
      {dashboard.isError ? <ErrorNotice error={dashboard.error} onRetry={() => dashboard.refetch()} /> : null}
      {dashboard.data ? (
        <>
          {/* The incidents come after every check's card (a dozen screens down on a phone): a way straight there. */}
          <p className="health-jump">
            <a href="#incidents" data-testid="jump-incidents">
              {(() => {
                const open = dashboard.data.incidents.filter((i) => i.status === 'open').length;
                return open === 0 ? 'Incidents: none open' : `Incidents: ${open} open`;
              })()}
            </a>
          </p>
          {(() => {
            const attention = components
              .filter((c) => c.checkedAt && c.status !== 'pass')
              .sort((a, b) => rank(a) - rank(b));
            return attention.length === 0 ? (
              <p className="health-summary" data-testid="health-summary">
                All {components.length} checks are working normally.
              </p>
            ) : (
              <div className="health-summary" data-testid="health-summary">
                <p>
                  {attention.length === 1 ? '1 check needs' : `${attention.length} checks need`} a look (shown first):
                </p>
                <ul>
                  {attention.map((c) => (
                    <li key={c.name}>
                      <a href={`#${cardId(c.name)}`}>
                        {featureLabel(c.feature)}: {lower(checkLabel(c.name))}
                      </a>{' '}
                      — {lower(STATUS_WORD[c.status])}
                    </li>
                  ))}
                </ul>
              </div>
            );
          })()}
          <div className="health-grid" data-testid="health-components">
            {[...components]
              .sort((a, b) => rank(a) - rank(b))
              .map((c) => (
                <article
                  key={c.name}
                  id={cardId(c.name)}
                  tabIndex={-1}
                  className="card health-card"
                  data-testid="health-card"
                  data-component={c.name}
                >
                  <header className="health-card-top">
                    <h2>
                      {featureLabel(c.feature)}: {lower(checkLabel(c.name))}
                    </h2>
                    <span className={`health-pill health-${c.status}`}>
                      {c.checkedAt ? STATUS_WORD[c.status] : 'Not checked yet'}
                    </span>
                  </header>
                  <p className="muted health-feature">
                    <code className="health-id">{c.name}</code>
                  </p>
                  <dl className="health-facts">
                    <div>
                      <dt>Objective</dt>
                      <dd>{c.slo}</dd>
                    </div>
                    <div>
                      <dt>Observed</dt>
                      <dd>{c.observed ?? '—'}</dd>
                    </div>
                    {c.since ? (
                      <div>
                        <dt>Since</dt>
                        <dd>{formatTime(c.since)}</dd>
                      </div>
                    ) : null}
                  </dl>
                  {c.output ? <p className="health-output">{c.output}</p> : null}
                  <HistoryBar history={c.history} />
                  {c.unit && c.unit !== 'n/a' && c.history.some((h) => h.value !== null) ? (
                    <Sparkline
                      points={c.history}
                      unit={c.unit}
                      label={`${featureLabel(c.feature)}: ${checkLabel(c.name)}`}
                    />
                  ) : null}
                </article>
              ))}
          </div>
          <h2 className="health-section-title" id="incidents" tabIndex={-1}>
            Incidents
          </h2>
          {dashboard.data.incidents.length === 0 ? (
            <p className="muted" data-testid="no-incidents">
              No incidents. An incident opens after 3 failed checks in a row and closes once what failed has passed 2
              checks in a row.
            </p>
          ) : (
            <div className="card table-card table-wrap">
              <table className="table table-stack" data-testid="incident-log">
                <thead>
                  <tr>
                    <th scope="col">Component</th>
                    <th scope="col">Status</th>
                    <th scope="col">Opened</th>
                    <th scope="col">Closed</th>
                    <th scope="col">What failed</th>
                  </tr>
                </thead>
                <tbody>
                  {dashboard.data.incidents.map((i) => (
                    <tr key={i.id}>
                      <td data-label="Component">
                        {componentLabel(i.component)} <code className="health-id">{i.component}</code>
                      </td>
                      <td data-label="Status">
                        <span className={`health-pill health-${i.status === 'open' ? 'fail' : 'pass'}`}>
                          {i.status === 'open' ? 'Open' : 'Resolved'}
                        </span>
                      </td>
                      <td data-label="Opened">{formatTime(i.openedAt)}</td>
                      <td data-label="Closed">{i.closedAt ? formatTime(i.closedAt) : '—'}</td>
                      <td className="health-summary" data-label="What failed">
                        {summaryInWords(i.summary)}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      ) : null}
    </section>
  );
}
