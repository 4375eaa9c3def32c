// Acceptance of inbound traffic (mail, channel webhooks, payment webhooks): each instance counts what
// it accepted and refused (unverified, malformed) per source, and flushes its counts to
// `inbound_acceptance` every few seconds; the probes read the sum over all instances for the last
// interval, so the rate is right however many instances share the traffic. Callers count only what
// says something about the source: a real connection's failed signature, not a call naming no
// connection or carrying no credential at all (anyone can send those).
//
// A refused call is anyone's to send, so each refusal also names the client network it came from (a
// hash of the address, its /64 for IPv6: see clientNetwork), and a probe fails only when the refusals came
// from enough networks: a provider out of step posts from its fleet, one sender looping forged calls
// from one machine cannot open an incident, raise banners or turn the status page. Networks are kept as keyed
// hashes (networkKey), never as addresses.
import { createHmac } from 'node:crypto';
import { and, eq, gt, lt, sql } from 'drizzle-orm';
import { withSystem } from './db/tenant.js';
import { clientNetwork } from './http/client-network.js';
import { newId } from './ids.js';
import type { ProbeResult } from './module.js';
import { inboundAcceptance } from './platform-tables.js';
import type { AppDeps } from './types.js';

type Pending = Map<string, { accepted: number; refused: number; from: Set<string> }>;
const pending = new WeakMap<object, Pending>();

function counts(deps: Pick<AppDeps, 'db'>, source: string) {
  let byDeps = pending.get(deps);
  if (!byDeps) {
    byDeps = new Map();
    pending.set(deps, byDeps);
  }
  let c = byDeps.get(source);
  if (!c) {
    c = { accepted: 0, refused: 0, from: new Set() };
    byDeps.set(source, c);
  }
  return c;
}

/**
 * A client network as stored: 16 hex characters of its HMAC under a key derived from the instance's encryption key
 * (the same on every instance, so networks count once across them). A plain hash of an IPv4 address could be
 * reversed by trying all 2^32; without the key nothing can be.
 */
const hmacKeys = new WeakMap<Buffer, Buffer>();
export function networkKey(deps: Pick<AppDeps, 'config'>, address: string): string {
  const secret = deps.config.encryptionKey;
  let key = hmacKeys.get(secret);
  if (!key) {
    key = createHmac('sha256', secret).update('atrium:acceptance:client-network').digest();
    hmacKeys.set(secret, key);
  }
  return createHmac('sha256', key).update(clientNetwork(address)).digest('hex').slice(0, 16);
}

export const countAccepted = (deps: Pick<AppDeps, 'db'>, source: string) => {
  counts(deps, source).accepted += 1;
};
/** A refused call, from the client address it came from (`request.ip`). */
export const countRefused = (deps: Pick<AppDeps, 'db' | 'config'>, source: string, from: string) => {
  const c = counts(deps, source);
  c.refused += 1;
  // Bounded: past a few hundred networks in one flush interval the probe has what it needs.
  if (c.from.size < 500) c.from.add(networkKey(deps, from));
};

const flushing = new WeakMap<object, Promise<void>>();

/**
 * Writes this instance's counts since the last flush (the background worker calls it every 5 s).
 * Flushes run one after another, so a caller that flushes and then reads sees every count made
 * before its call, also while another flush is in flight.
 */
export function flushAcceptance(deps: Pick<AppDeps, 'db'>): Promise<void> {
  const run = async () => {
    const byDeps = pending.get(deps);
    if (!byDeps || byDeps.size === 0) return;
    const rows = [...byDeps].map(([source, c]) => ({
      id: newId('acc'),
      source,
      accepted: c.accepted,
      refused: c.refused,
      refusedFrom: [...c.from],
    }));
    byDeps.clear();
    await withSystem(deps.db, (tx) => tx.insert(inboundAcceptance).values(rows));
  };
  const next = (flushing.get(deps) ?? Promise.resolve()).then(run);
  flushing.set(
    deps,
    next.catch(() => undefined),
  );
  return next;
}

/** Deletes counts older than a day (the health sweep). */
export async function sweepAcceptance(deps: Pick<AppDeps, 'db'>): Promise<void> {
  await withSystem(deps.db, (tx) =>
    tx.delete(inboundAcceptance).where(lt(inboundAcceptance.at, new Date(Date.now() - 86_400_000))),
  );
}

/**
 * Fewest refused calls in the window for a probe to fail. A rate over a handful of calls is noise
 * (one stray refusal on a quiet channel reads 0 %); below this the probe at most warns, which shows on
 * the dashboard but opens no incident, e-mails no one and raises no banner. With the incident rule
 * (3 failing runs in a row) it takes at least 15 refusals over 3 intervals to open one.
 */
export const MIN_REFUSED_TO_FAIL = 5;

/**
 * Fewest client networks the refusals must come from for a probe to fail, unless the source says
 * otherwise: a provider posts from a fleet of addresses, so a provider out of step is refused from
 * several; one machine sending forged calls is one network and can at most make the probe warn.
 */
export const MIN_NETWORKS_TO_FAIL = 3;

/**
 * The probe's view of a source over the last `windowMs` (all instances): the accepted share
 * (pass ≥ 95 %, warn ≥ 80 %, fail below with at least `MIN_REFUSED_TO_FAIL` refused from at least
 * `minNetworks` client networks, else warn); no traffic passes.
 */
export async function measureAcceptance(
  deps: AppDeps,
  source: string,
  windowMs: number,
  { minNetworks = MIN_NETWORKS_TO_FAIL }: { minNetworks?: number } = {},
): Promise<ProbeResult> {
  await flushAcceptance(deps);
  const since = new Date(Date.now() - windowMs);
  const inWindow = and(eq(inboundAcceptance.source, source), gt(inboundAcceptance.at, since));
  const [row] = await withSystem(deps.db, (tx) =>
    tx
      .select({
        accepted: sql<number>`coalesce(sum(${inboundAcceptance.accepted}), 0)::int`,
        refused: sql<number>`coalesce(sum(${inboundAcceptance.refused}), 0)::int`,
        networks: sql<number>`(SELECT count(DISTINCT n)::int FROM ${inboundAcceptance}, unnest(${inboundAcceptance.refusedFrom}) AS n WHERE ${inWindow})`,
      })
      .from(inboundAcceptance)
      .where(inWindow),
  );
  const accepted = Number(row?.accepted ?? 0);
  const refused = Number(row?.refused ?? 0);
  const networks = Number(row?.networks ?? 0);
  const total = accepted + refused;
  const span = `in the last ${Math.round(windowMs / 1000)} s`;
  if (total === 0) return { status: 'pass', observedValue: 100, observedUnit: '%', output: `No traffic ${span}` };
  const rate = Math.round((accepted / total) * 1000) / 10;
  const tooFew =
    rate >= 80
      ? null
      : refused < MIN_REFUSED_TO_FAIL
        ? `fewer than ${MIN_REFUSED_TO_FAIL} refused: too few to fail`
        : networks < minNetworks
          ? `refused from ${networks === 1 ? 'one client network' : `${networks} client networks`}, fewer than ${minNetworks}: too few to fail`
          : null;
  return {
    status: rate >= 95 ? 'pass' : rate >= 80 || tooFew ? 'warn' : 'fail',
    observedValue: rate,
    observedUnit: '%',
    output: `${accepted} accepted, ${refused} refused ${span}${tooFew ? ` (${tooFew})` : ''}`,
  };
}
