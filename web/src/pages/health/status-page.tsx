/** The public status page (`/status`, no sign-in): each feature now, and 90 days of daily uptime. */
import { ErrorNotice, Loading } from '../../components/status.js';
import { featureLabel, usePublicStatus } from './health-api.js';
import './health.css';

function UptimeBar({ uptime }: { uptime: { day: string; percent: number }[] }) {
  const byDay = new Map(uptime.map((u) => [u.day, u.percent]));
  const days = Array.from({ length: 90 }, (_, i) => {
    const d = new Date(Date.now() - (89 - i) * 86_400_000);
    return d.toISOString().slice(0, 10);
  });
  const measured = uptime.length ? uptime.reduce((a, u) => a + u.percent, 0) / uptime.length : null;
  // Over the days measured, and said so: a new install has one day, not ninety.
  const over =
    uptime.length >= 90
      ? 'over 90 days'
      : `over the ${uptime.length === 1 ? 'one day' : `${uptime.length} days`} measured`;
  return (
    <>
      <div
        className="history-bar uptime-bar"
        role="img"
        aria-label={measured === null ? 'No data yet' : `${measured.toFixed(2)} % uptime ${over}`}
      >
        {days.map((day) => {
          const p = byDay.get(day);
          const cls =
            p === undefined ? 'history-none' : p >= 99 ? 'history-pass' : p >= 90 ? 'history-warn' : 'history-fail';
          return (
            <span
              key={day}
              className={`history-run ${cls}`}
              title={p === undefined ? `${day}: no data` : `${day}: ${p} %`}
            />
          );
        })}
      </div>
      <p className="muted uptime-legend">
        <span>90 days ago</span>
        <span data-testid="uptime-summary">
          {measured === null ? 'No data yet' : `${measured.toFixed(2)} % uptime ${over}`}
        </span>
        <span>Today</span>
      </p>
      {/* Each bar's figure is only a hover title, which a phone or a screen reader never shows: the days that
          were not fine are said in words. */}
      <LowDays uptime={uptime} />
    </>
  );
}

const dayWords = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });

function LowDays({ uptime }: { uptime: { day: string; percent: number }[] }) {
  const low = uptime.filter((u) => u.percent < 99).sort((a, b) => b.day.localeCompare(a.day));
  if (uptime.length === 0) return null;
  const shown = low.slice(0, 5).map((u) => `${dayWords.format(new Date(`${u.day}T00:00:00Z`))} (${u.percent} %)`);
  return (
    <p className="muted uptime-low" data-testid="uptime-low-days">
      {low.length === 0
        ? 'Every day at 99 % or more.'
        : `Below 99 %: ${shown.join(', ')}${low.length > shown.length ? ` and ${low.length - shown.length} more` : ''}.`}
    </p>
  );
}

export function StatusPage() {
  const status = usePublicStatus();
  return (
    <main className="status-page" id="main">
      <h1>Atrium status</h1>
      {status.isPending ? <Loading label="Loading status…" /> : null}
      {status.isError ? <ErrorNotice error={status.error} onRetry={() => status.refetch()} /> : null}
      {status.data ? (
        <>
          <p className={`status-overall status-${status.data.status}`} data-testid="status-overall">
            {status.data.status === 'operational'
              ? 'All systems operational'
              : (() => {
                  // Which ones, in words (their cards come first below).
                  const down = status.data.features
                    .filter((f) => f.status !== 'operational')
                    .map((f) => featureLabel(f.feature));
                  return down.length === 0
                    ? 'Some features are not working normally'
                    : `Not working normally: ${down.join(', ')}`;
                })()}
          </p>
          <p className="muted status-updated" data-testid="status-updated">
            Checked every minute; this page refreshes by itself. Last read at{' '}
            {new Date(status.dataUpdatedAt).toLocaleTimeString(undefined, { hour: 'numeric', minute: '2-digit' })}.
          </p>
          <ul className="status-features">
            {[...status.data.features]
              .sort((a, b) => Number(a.status === 'operational') - Number(b.status === 'operational'))
              .map((f) => (
                <li key={f.feature} className="card status-feature" data-testid="status-feature">
                  <div className="health-card-top">
                    <h2>{featureLabel(f.feature)}</h2>
                    <span className={`health-pill health-${f.status === 'operational' ? 'pass' : 'fail'}`}>
                      {f.status === 'operational' ? 'Operational' : 'Disrupted'}
                    </span>
                  </div>
                  <UptimeBar uptime={f.uptime} />
                </li>
              ))}
          </ul>
        </>
      ) : null}
    </main>
  );
}
