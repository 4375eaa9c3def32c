import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { timestamptz as ts } from '../../platform/db/columns.js';

export const organizations = pgTable('organizations', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
});

export const workspaces = pgTable(
  'workspaces',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    tier: text('tier', { enum: ['free', 'standard', 'advanced', 'enterprise'] }).notNull(),
    organizationId: text('organization_id').references(() => organizations.id),
    /** The clinic's IANA time zone (migration 0049); null: each device shows its own. */
    timeZone: text('time_zone'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('workspaces_org_idx').on(t.organizationId)],
);

export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    email: text('email').notNull(),
    name: text('name').notNull(),
    passwordHash: text('password_hash'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('users_email_idx').on(t.email)],
);

export const memberships = pgTable(
  'memberships',
  {
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    role: text('role', { enum: ['admin', 'member'] }).notNull(),
    isProvider: boolean('is_provider').notNull().default(false),
    createdAt: ts('created_at').notNull().defaultNow(),
    /**
     * The members list's last sign-in to this workspace. Set by the database whenever a session of the
     * member is opened here or moved here (trigger `atrium_note_sign_in`, migration 0039), so it outlives
     * the sessions, which are pruned.
     */
    lastSignInAt: ts('last_sign_in_at'),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.userId] }), index('memberships_user_idx').on(t.userId)],
);

export const apiTokens = pgTable(
  'api_tokens',
  {
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id),
    id: text('id').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    name: text('name').notNull(),
    tokenHash: text('token_hash').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    lastUsedAt: ts('last_used_at'),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.id] }), uniqueIndex('api_tokens_hash_idx').on(t.tokenHash)],
);

export const sessions = pgTable(
  'sessions',
  {
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id),
    id: text('id').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    tokenHash: text('token_hash').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
    revokedAt: ts('revoked_at'),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    uniqueIndex('sessions_hash_idx').on(t.tokenHash),
    // A member's sessions in a workspace (revoked when the member is removed).
    index('sessions_user_created_idx').on(t.workspaceId, t.userId, t.createdAt),
    // When a session ended (expired or revoked): the pruning job's batches (pruneEndedSessions).
    index('sessions_ended_idx').using('btree', sql`least(${t.expiresAt}, ${t.revokedAt})`),
  ],
);

/** Fixed-window counters shared by all instances (sign-in throttling). */
export const rateLimits = pgTable('rate_limits', {
  key: text('key').primaryKey(),
  windowStart: ts('window_start').notNull(),
  count: integer('count').notNull(),
});

/** `workspace_id` referencing workspaces(id): for other modules' tables that want the tenant root as a foreign key. */
export const workspaceIdColumn = () =>
  text('workspace_id')
    .notNull()
    .references(() => workspaces.id);

/**
 * Pending and accepted invitations (contract §2a). The membership is created on acceptance; until
 * then GET /members shows the invitee as `invited` from this row (name and e-mail kept here, since
 * the app role sees only members' user rows). Only a hash of the one-time token is stored.
 */
export const invitations = pgTable(
  'invitations',
  {
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id),
    id: text('id').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    email: text('email').notNull(),
    name: text('name').notNull(),
    role: text('role', { enum: ['admin', 'member'] }).notNull(),
    isProvider: boolean('is_provider').notNull().default(false),
    tokenHash: text('token_hash').notNull(),
    invitedBy: text('invited_by'),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
    acceptedAt: ts('accepted_at'),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    uniqueIndex('invitations_hash_idx').on(t.tokenHash),
    index('invitations_user_idx').on(t.workspaceId, t.userId),
  ],
);

/** Password-reset links (single use, short-lived); only a hash of the token. System role only. */
export const passwordResets = pgTable(
  'password_resets',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    tokenHash: text('token_hash').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
  },
  (t) => [uniqueIndex('password_resets_hash_idx').on(t.tokenHash), index('password_resets_user_idx').on(t.userId)],
);
