import { index, pgTable, text } from 'drizzle-orm/pg-core';
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
  },
  (t) => [index('health_incidents_component_idx').on(t.component, t.status)],
);
