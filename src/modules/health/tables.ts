import { sql } from 'drizzle-orm';
import { date, index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { timestamptz as ts } from '../../platform/db/columns.js';

/** One probe result (contract §9): kept ATRIUM_HEALTH_TTL, then swept. Platform data, no tenant. */
export const serviceHealthChecks = pgTable(
  'service_health_checks',
  {
    id: text('id').primaryKey(),
    runId: text('run_id').notNull(),
    component: text('component').notNull(),
    measurement: text('measurement').notNull(),
    status: text('status', { enum: ['pass', 'warn', 'fail'] }).notNull(),
    observedValue: text('observed_value').notNull(),
    observedUnit: text('observed_unit').notNull(),
    output: text('output'),
    checkedAt: ts('checked_at').notNull().defaultNow(),
  },
  (t) => [
    index('service_health_checks_probe_idx').on(t.component, t.measurement, t.checkedAt),
    index('service_health_checks_time_idx').on(t.checkedAt),
  ],
);

/** An incident of one component: opened after 3 failing runs, closed after 2 runs without a failure. */
export const healthIncidents = pgTable(
  'health_incidents',
  {
    id: text('id').primaryKey(),
    component: text('component').notNull(),
    status: text('status', { enum: ['open', 'closed'] }).notNull(),
    summary: text('summary').notNull(),
    openedAt: ts('opened_at').notNull().defaultNow(),
    closedAt: ts('closed_at'),
    // The measurements that failed while it was open (or opened it): each must pass 2 runs to close it (0047).
    failing: text('failing').array().notNull().default(sql`'{}'::text[]`),
  },
  (t) => [index('health_incidents_component_idx').on(t.component, t.status)],
);

/**
 * Runs and runs not failing per probe and UTC day (migration 0046): the public status page's 90 days of
 * uptime, added to by each recorded run, kept 90 days whatever ATRIUM_HEALTH_TTL. Platform data, no tenant.
 */
export const healthDaily = pgTable(
  'health_daily',
  {
    component: text('component').notNull(),
    measurement: text('measurement').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    runs: integer('runs').notNull().default(0),
    passing: integer('passing').notNull().default(0),
  },
  (t) => [
    primaryKey({ name: 'health_daily_pkey', columns: [t.component, t.measurement, t.day] }),
    index('health_daily_day_idx').on(t.day),
  ],
);
