// Health monitoring (contract §9): runs every module's dependency probes (each with its own timeout,
// so one hanging dependency never stalls the others), writes each result to service_health_checks,
// and keeps incidents per component with hysteresis: 3 consecutive failing runs of any measurement
// open one, 2 consecutive runs with none of them failing (a warning is no failure) close it; each opening
// and closing e-mails ATRIUM_ADMIN_ALERT_EMAILS once.
import { and, desc, eq, gte, lt, sql } from 'drizzle-orm';
import type { RequestContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/client.js';
import { withSystem, withTenant } from '../../platform/db/tenant.js';
import { newId } from '../../platform/ids.js';
import { enqueueMail } from '../../platform/mail/mailer.js';
import type { DependencyProbe, ProbeResult, ProbeStatus } from '../../platform/module.js';
import type { AppDeps } from '../../platform/types.js';
import { allWorkspaceIds } from '../identity/index.js';
import { postInboxNotice, settleInboxNotices } from '../webhooks/index.js';
import { healthDaily, healthIncidents, serviceHealthChecks } from './tables.js';

export const OPEN_AFTER = 3;
export const CLOSE_AFTER = 2;
const DEFAULT_TIMEOUT_MS = 5_000;

export interface ProbeRun extends ProbeResult {
  id: string;
  component: string;
  measurement: string;
  time: string;
}

const split = (id: string) => {
  const at = id.indexOf(':');
  return { component: id.slice(0, at), measurement: id.slice(at + 1) };
};

async function measure(deps: AppDeps, probe: DependencyProbe, deep: boolean): Promise<ProbeResult> {
  const timeoutMs = probe.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ProbeResult>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve({
        status: 'fail',
        observedValue: timeoutMs,
        observedUnit: 'ms',
        output: `No answer within ${timeoutMs} ms`,
      });
    }, timeoutMs);
  });
  try {
    return await Promise.race([probe.measure(deps, { signal: controller.signal, deep }), timeout]);
  } catch (err) {
    return { status: 'fail', observedValue: 0, observedUnit: 'n/a', output: (err as Error).message.slice(0, 500) };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the probes (all at once) and answers their results; nothing is written. */
export async function runProbes(deps: AppDeps, probes: DependencyProbe[], deep = false): Promise<ProbeRun[]> {
  return Promise.all(
    probes.map(async (probe) => {
      const result = await measure(deps, probe, deep);
      return { ...result, id: probe.id, ...split(probe.id), time: new Date().toISOString() };
    }),
  );
}

export const worst = (statuses: ProbeStatus[]): ProbeStatus =>
  statuses.includes('fail') ? 'fail' : statuses.includes('warn') ? 'warn' : 'pass';

/**
 * Writes a run and moves incidents; the scheduler calls this once per interval across instances. The results
 * (and the daily rollup) are committed first, on their own; then each component's incident moves in its own
 * transaction with its e-mail and inbox notices, so a failure there (one workspace's `affects`, a notice)
 * loses neither the run's results nor the other components' incidents. That component's opening or closing
 * is rolled back whole (no e-mail without its incident) and happens at the next run; the error is thrown
 * once every component has had its turn.
 */
export async function recordRun(deps: AppDeps, runs: ProbeRun[]): Promise<void> {
  const runId = newId('hrun');
  try {
    if (runs.length === 0) return;
    await withSystem(deps.db, async (tx) => {
      await tx.insert(serviceHealthChecks).values(
        runs.map((r) => ({
          id: newId('hck'),
          runId,
          component: r.component,
          measurement: r.measurement,
          status: r.status,
          observedValue: String(r.observedValue).slice(0, 200),
          observedUnit: r.observedUnit,
          output: r.output?.slice(0, 1000) ?? null,
          checkedAt: new Date(r.time),
        })),
      );
      await addToDaily(tx, runs);
    });
    let failure: unknown;
    for (const component of new Set(runs.map((r) => r.component))) {
      try {
        await withSystem(deps.db, (tx) => moveIncident(tx, deps, component, runs));
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure !== undefined) throw failure;
  } finally {
    // The page this instance keeps is dropped once the run (and any incident it moved) is in.
    statusCache.delete(deps);
  }
}

/** Opens or closes the component's incident after a run (3 failing runs open, 2 without a failure close). */
async function moveIncident(tx: Tx, deps: AppDeps, component: string, runs: ProbeRun[]): Promise<void> {
  const measurements = runs.filter((r) => r.component === component).map((r) => r.measurement);
  // The last few results of each measurement, newest first.
  const history = new Map<string, ProbeStatus[]>();
  for (const m of measurements) {
    const rows = await tx
      .select({ status: serviceHealthChecks.status })
      .from(serviceHealthChecks)
      .where(and(eq(serviceHealthChecks.component, component), eq(serviceHealthChecks.measurement, m)))
      .orderBy(desc(serviceHealthChecks.checkedAt))
      .limit(OPEN_AFTER);
    history.set(
      m,
      rows.map((r) => r.status),
    );
  }
  const [open] = await tx
    .select()
    .from(healthIncidents)
    .where(and(eq(healthIncidents.component, component), eq(healthIncidents.status, 'open')))
    .for('update');
  const failing = [...history].filter(
    ([, s]) => s.length >= OPEN_AFTER && s.slice(0, OPEN_AFTER).every((x) => x === 'fail'),
  );
  // Recovered: no measurement failed in the last 2 runs, and each that failed during the incident (or opened it)
  // passed both (contract §9: all of them pass 2 runs). A sibling that only warned does not hold it open (health+json:
  // "healthy, with some concerns"): some warn for good (ai:fallback with one provider, tts:fallback without a
  // fallback voice, a disabled provider), and would keep it open for ever.
  const failedDuring = new Set([...(open?.failing ?? []), ...failing.map(([m]) => m)]);
  const failingNow = runs.filter((r) => r.component === component && r.status === 'fail').map((r) => r.measurement);
  const recovered = [...history].every(
    ([m, s]) =>
      s.length >= CLOSE_AFTER &&
      s.slice(0, CLOSE_AFTER).every((x) => (failedDuring.has(m) ? x === 'pass' : x !== 'fail')),
  );
  if (!open && failing.length) {
    const latest = runs.filter((r) => r.component === component && r.status === 'fail');
    const summary = latest.map((r) => `${r.id}: ${r.output ?? `${r.observedValue} ${r.observedUnit}`}`).join('; ');
    const inserted = await tx
      .insert(healthIncidents)
      .values({ id: newId('inc'), component, status: 'open', summary: summary.slice(0, 1000), failing: failingNow })
      .onConflictDoNothing()
      .returning();
    if (inserted[0]) {
      await alert(tx, deps, 'opened', component, summary);
      await noticeAffected(tx, deps, component, 'opened');
    }
  } else if (open && failingNow.some((m) => !open.failing.includes(m))) {
    // Failing now, while open: it must pass again before the incident closes.
    await tx
      .update(healthIncidents)
      .set({ failing: [...new Set([...open.failing, ...failingNow])] })
      .where(eq(healthIncidents.id, open.id));
  } else if (open && recovered) {
    await tx
      .update(healthIncidents)
      .set({ status: 'closed', closedAt: sql`now()` })
      .where(eq(healthIncidents.id, open.id));
    await alert(tx, deps, 'resolved', component, open.summary);
    await noticeAffected(tx, deps, component, 'resolved');
  }
}

const DAY_MS = 86_400_000;
/** Days of uptime on the status page; the rollup keeps a little more. */
const STATUS_DAYS = 90;
const DAILY_KEEP_DAYS = 92;
const utcDay = (at: Date | number | string) => new Date(at).toISOString().slice(0, 10);

/**
 * Adds a run to the daily rollup (runs and runs not failing per probe and UTC day), in the transaction that
 * writes its checks. Rows in key order, so two instances recording at once lock them in the same order.
 */
async function addToDaily(tx: Tx, runs: ProbeRun[]): Promise<void> {
  const days = new Map<
    string,
    { component: string; measurement: string; day: string; runs: number; passing: number }
  >();
  for (const r of runs) {
    const day = utcDay(r.time);
    const key = `${r.component}\u0000${r.measurement}\u0000${day}`;
    const entry = days.get(key) ?? { component: r.component, measurement: r.measurement, day, runs: 0, passing: 0 };
    entry.runs++;
    if (r.status !== 'fail') entry.passing++;
    days.set(key, entry);
  }
  const rows = [...days].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
  await tx
    .insert(healthDaily)
    .values(rows)
    .onConflictDoUpdate({
      target: [healthDaily.component, healthDaily.measurement, healthDaily.day],
      set: {
        runs: sql`${healthDaily.runs} + excluded.runs`,
        passing: sql`${healthDaily.passing} + excluded.passing`,
      },
    });
}

async function alert(
  tx: Tx,
  deps: AppDeps,
  what: 'opened' | 'resolved',
  component: string,
  summary: string,
): Promise<void> {
  if (deps.config.adminAlertEmails.length === 0) return;
  await enqueueMail(tx, null, {
    to: deps.config.adminAlertEmails,
    subject:
      what === 'opened' ? `[Atrium] Incident: ${component} is failing` : `[Atrium] Resolved: ${component} recovered`,
    text:
      what === 'opened'
        ? `${component} failed ${OPEN_AFTER} probe runs in a row.\n\n${summary}\n\nYou will get one more e-mail when it recovers.`
        : `${component} has not failed for ${CLOSE_AFTER} probe runs in a row; the incident is closed.\n\nIt was: ${summary}`,
  });
}

/**
 * Tells the admins of every workspace the component's features touch, in their inbox (the same
 * `affects` rule as the banners), in the transaction that opens or closes the incident.
 */
async function noticeAffected(tx: Tx, deps: AppDeps, component: string, what: 'opened' | 'resolved'): Promise<void> {
  const probes = deps.monitors.filter((p) => p.id.startsWith(`${component}:`));
  if (probes.length === 0) return;
  const impact = probes.find((p) => p.impact)?.impact ?? `${component} is not working normally.`;
  for (const workspaceId of await allWorkspaceIds(tx)) {
    let touches = false;
    for (const p of probes) {
      if (!p.affects || (await p.affects(tx, workspaceId))) {
        touches = true;
        break;
      }
    }
    if (!touches) {
      // No longer touched (say, it disconnected that provider during the incident): no recovery notice, but the
      // opening's notice it got is settled all the same, not left open for ever.
      if (what === 'resolved')
        await settleInboxNotices(tx, workspaceId, `health.${component}`, ['health.incident_opened']);
      continue;
    }
    await postInboxNotice(tx, workspaceId, {
      kind: what === 'opened' ? 'health.incident_opened' : 'health.incident_resolved',
      eventType: `health.${component}`,
      // In the users' words of the opening (not the component's id, "oauth-google").
      message: what === 'opened' ? impact : `Working normally again. It was: ${impact}`,
      // The recovery closes the opening's notice and needs no one's action itself.
      settles: what === 'resolved' ? ['health.incident_opened'] : undefined,
    });
  }
}

/**
 * Deletes results older than ATRIUM_HEALTH_TTL, and days of the rollup the status page no longer shows
 * (90 days, whatever the TTL): a scheduled sweep. Answers how many results it deleted.
 */
export async function sweep(deps: AppDeps): Promise<number> {
  const before = new Date(Date.now() - deps.config.health.ttlMs);
  return withSystem(deps.db, async (tx) => {
    const gone = await tx
      .delete(serviceHealthChecks)
      .where(lt(serviceHealthChecks.checkedAt, before))
      .returning({ id: serviceHealthChecks.id });
    await tx.delete(healthDaily).where(lt(healthDaily.day, utcDay(Date.now() - DAILY_KEEP_DAYS * DAY_MS)));
    return gone.length;
  });
}

/**
 * The latest recorded result of each of these probes (a cron endpoint that runs only some probes
 * still answers every check, §9): read from the last runs, one row per probe (an index probe each);
 * a probe never run yet is `warn`, "not checked yet".
 */
export async function latestRuns(deps: AppDeps, probes: DependencyProbe[]): Promise<ProbeRun[]> {
  if (probes.length === 0) return [];
  return withSystem(deps.db, (tx) =>
    Promise.all(
      probes.map(async (probe): Promise<ProbeRun> => {
        const { component, measurement } = split(probe.id);
        const [row] = await tx
          .select()
          .from(serviceHealthChecks)
          .where(and(eq(serviceHealthChecks.component, component), eq(serviceHealthChecks.measurement, measurement)))
          .orderBy(desc(serviceHealthChecks.checkedAt))
          .limit(1);
        if (!row) {
          return {
            id: probe.id,
            component,
            measurement,
            status: 'warn',
            observedValue: 'unknown',
            observedUnit: 'n/a',
            output: 'not checked yet',
            time: new Date().toISOString(),
          };
        }
        const value = Number(row.observedValue);
        return {
          id: probe.id,
          component,
          measurement,
          status: row.status as ProbeStatus,
          observedValue: row.observedValue !== '' && Number.isFinite(value) ? value : row.observedValue,
          observedUnit: row.observedUnit,
          ...(row.output ? { output: row.output } : {}),
          time: row.checkedAt.toISOString(),
        };
      }),
    ),
  );
}

/** `application/health+json` (draft-inadarei-api-health-check): overall status and every check. */
export function healthJson(runs: ProbeRun[]) {
  const checks: Record<
    string,
    {
      componentId: string;
      status: ProbeStatus;
      observedValue: number | string | boolean;
      observedUnit: string;
      time: string;
      output?: string;
    }[]
  > = {};
  for (const r of runs) {
    checks[r.id] = [
      {
        componentId: r.component,
        status: r.status,
        observedValue: r.observedValue,
        observedUnit: r.observedUnit,
        time: r.time,
        ...(r.output ? { output: r.output } : {}),
      },
    ];
  }
  return { status: worst(runs.map((r) => r.status)), checks };
}

/** The dashboard (contract §9 `GET /integrations/chain-health`): per component, 24 h of history. */
export async function dashboard(deps: AppDeps) {
  const since = new Date(Date.now() - 24 * 3600_000);
  // Each probe's 24 h on its own (an index range on (component, measurement, checked_at)): one cap over all
  // of them cut the history short (25 probes a minute are 36,000 rows a day). The cap per probe only guards
  // against a very short ATRIUM_HEALTH_INTERVAL: twice the scheduled runs of 24 h, cron runs on top.
  const perProbe = Math.max(3_000, Math.ceil((2 * 24 * 3600_000) / Math.max(1_000, deps.config.health.intervalMs)));
  return withSystem(deps.db, async (tx) => {
    const history = await Promise.all(
      deps.monitors.map((probe) => {
        const { component, measurement } = split(probe.id);
        return tx
          .select()
          .from(serviceHealthChecks)
          .where(
            and(
              eq(serviceHealthChecks.component, component),
              eq(serviceHealthChecks.measurement, measurement),
              gte(serviceHealthChecks.checkedAt, since),
            ),
          )
          .orderBy(desc(serviceHealthChecks.checkedAt))
          .limit(perProbe);
      }),
    );
    const incidents = await tx.select().from(healthIncidents).orderBy(desc(healthIncidents.openedAt)).limit(50);
    const components = deps.monitors.map((probe, i) => {
      const mine = history[i];
      const latest = mine[0];
      // Since when the current status has held.
      let since = latest?.checkedAt;
      for (const r of mine) {
        if (r.status !== latest.status) break;
        since = r.checkedAt;
      }
      return {
        name: probe.id,
        feature: probe.feature,
        status: (latest?.status ?? 'warn') as ProbeStatus,
        since: since?.toISOString() ?? null,
        slo: probe.slo,
        observed: latest ? `${latest.observedValue} ${latest.observedUnit}` : null,
        output: latest?.output ?? null,
        checkedAt: latest?.checkedAt.toISOString() ?? null,
        history: mine.map((r) => {
          const value = Number(r.observedValue);
          return {
            at: r.checkedAt.toISOString(),
            status: r.status as ProbeStatus,
            value: Number.isFinite(value) ? value : null,
          };
        }),
        unit: latest?.observedUnit ?? null,
      };
    });
    return {
      status: worst(components.map((c) => c.status)),
      components,
      incidents: incidents.map((i) => ({
        id: i.id,
        component: i.component,
        status: i.status,
        summary: i.summary,
        openedAt: i.openedAt.toISOString(),
        closedAt: i.closedAt?.toISOString() ?? null,
      })),
    };
  });
}

/**
 * The banners one user sees (contract §9 `GET /health/banners`): each open incident's feature, only
 * where that feature touches the user's workspace (a calendar banner only with a connection to that
 * provider, a channel banner only where that channel is connected). `down` while every measurement of
 * the component still fails, `degraded` once some pass again.
 */
export async function banners(deps: AppDeps, ctx: RequestContext) {
  const open = await withSystem(deps.db, (tx) =>
    tx.select().from(healthIncidents).where(eq(healthIncidents.status, 'open')).orderBy(healthIncidents.openedAt),
  );
  if (open.length === 0) return { items: [] };
  const items: { feature: string; status: 'degraded' | 'down'; message: string; since: string }[] = [];
  for (const incident of open) {
    const probes = deps.monitors.filter((p) => p.id.startsWith(`${incident.component}:`));
    if (probes.length === 0) continue;
    const touches = await withTenant(deps.db, ctx, async (tx) => {
      for (const p of probes) if (!p.affects || (await p.affects(tx, ctx.workspaceId))) return true;
      return false;
    });
    if (!touches) continue;
    const latest = await withSystem(deps.db, (tx) =>
      tx
        .select({ measurement: serviceHealthChecks.measurement, status: serviceHealthChecks.status })
        .from(serviceHealthChecks)
        .where(eq(serviceHealthChecks.component, incident.component))
        .orderBy(desc(serviceHealthChecks.checkedAt))
        .limit(probes.length),
    );
    const allFail = latest.length > 0 && latest.every((l) => l.status === 'fail');
    // What users notice is what the failing measurement stands for (a payments webhook out of step is
    // "payments may not show as paid", not "payment links cannot be created"); else the component's first.
    const failing = probes.filter((p) =>
      latest.some((l) => l.status === 'fail' && `${incident.component}:${l.measurement}` === p.id),
    );
    items.push({
      feature: probes[0].feature,
      status: allFail ? 'down' : 'degraded',
      message: [...failing, ...probes].find((p) => p.impact)?.impact ?? `${probes[0].feature} is not working normally.`,
      since: incident.openedAt.toISOString(),
    });
  }
  return { items };
}

/** How long an instance answers the public status page from memory (it is public and unauthenticated). */
export const STATUS_CACHE_MS = 30_000;
type PublicStatus = Awaited<ReturnType<typeof readPublicStatus>>;
// Per app instance: the answer and when it was asked for; callers meanwhile share it (one read for any
// number of anonymous calls). A run recorded by this instance drops it.
const statusCache = new WeakMap<AppDeps, { at: number; answer: Promise<PublicStatus> }>();

/**
 * The public status page (no sign-in, no tenant data): each feature's status now and its daily
 * uptime (share of runs not failing, per UTC day) over 90 days, from the daily rollup (`health_daily`),
 * answered from a cache of 30 s.
 */
export function publicStatus(deps: AppDeps): Promise<PublicStatus> {
  const cached = statusCache.get(deps);
  if (cached && Date.now() - cached.at < STATUS_CACHE_MS) return cached.answer;
  const answer = readPublicStatus(deps);
  const entry = { at: Date.now(), answer };
  statusCache.set(deps, entry);
  // A failed read is not kept.
  answer.catch(() => {
    if (statusCache.get(deps) === entry) statusCache.delete(deps);
  });
  return answer;
}

async function readPublicStatus(deps: AppDeps) {
  const features = [...new Set(deps.monitors.map((p) => p.feature))];
  const since = utcDay(Date.now() - (STATUS_DAYS - 1) * DAY_MS);
  return withSystem(deps.db, async (tx) => {
    const daily = await tx
      .select({
        component: healthDaily.component,
        measurement: healthDaily.measurement,
        day: healthDaily.day,
        runs: healthDaily.runs,
        passing: healthDaily.passing,
      })
      .from(healthDaily)
      .where(gte(healthDaily.day, since))
      .orderBy(healthDaily.day);
    const open = await tx.select().from(healthIncidents).where(eq(healthIncidents.status, 'open'));
    const featureOf = new Map(deps.monitors.map((p) => [p.id, p.feature]));
    const items = features.map((feature) => {
      const components = new Set(
        deps.monitors.filter((p) => p.feature === feature).map((p) => p.id.slice(0, p.id.indexOf(':'))),
      );
      const days = new Map<string, { runs: number; passing: number }>();
      for (const d of daily) {
        if (featureOf.get(`${d.component}:${d.measurement}`) !== feature) continue;
        const day = days.get(d.day) ?? { runs: 0, passing: 0 };
        day.runs += d.runs;
        day.passing += d.passing;
        days.set(d.day, day);
      }
      const incident = open.find((i) => components.has(i.component));
      return {
        feature,
        status: (incident ? 'down' : 'operational') as 'operational' | 'down',
        since: incident?.openedAt.toISOString() ?? null,
        uptime: [...days]
          .filter(([, d]) => d.runs > 0)
          .map(([day, d]) => ({ day, percent: Math.round((d.passing / d.runs) * 1000) / 10 })),
      };
    });
    return {
      status: (items.some((i) => i.status === 'down') ? 'degraded' : 'operational') as 'operational' | 'degraded',
      features: items,
    };
  });
}
