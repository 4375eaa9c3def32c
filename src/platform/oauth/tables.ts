import { index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { timestamptz as ts } from '../db/columns.js';

/**
 * A provider account connected to a workspace (platform/oauth). Tokens are sealed with the secret
 * box, bound to workspace, connection and token kind; they never leave platform/oauth in clear
 * except as the return value of getAccessToken.
 */
export const oauthConnections = pgTable(
  'oauth_connections',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    provider: text('provider').notNull(),
    /** Lower case; one connection per (workspace, provider, account): connecting again repairs it. */
    accountEmail: text('account_email').notNull(),
    /** The member who connected (or last reconnected) it. */
    userId: text('user_id').notNull(),
    accessTokenEnc: text('access_token_enc').notNull(),
    refreshTokenEnc: text('refresh_token_enc'),
    /** Null when the provider did not say: the token is used until refused. */
    expiresAt: ts('expires_at'),
    status: text('status', { enum: ['active', 'reauth_required'] })
      .notNull()
      .default('active'),
    scopes: jsonb('scopes').$type<string[]>().notNull().default([]),
    /** Bumped by every refresh: a caller that read an older version knows someone else refreshed. */
    tokenVersion: integer('token_version').notNull().default(1),
    /** Cross-instance single flight: the one refresher holds this lease (no transaction spans the token call). */
    refreshLeaseUntil: ts('refresh_lease_until'),
    refreshHolder: text('refresh_holder'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    uniqueIndex('oauth_connections_account_idx').on(t.workspaceId, t.provider, t.accountEmail),
    index('oauth_connections_user_idx').on(t.workspaceId, t.userId),
  ],
);
