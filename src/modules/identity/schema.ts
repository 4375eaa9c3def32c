import { z } from 'zod';
import { PASSWORD_MAX_LENGTH } from '../../platform/auth/password-policy.js';
import { TIERS } from '../../platform/context.js';
import { canonicalTimeZone } from '../../platform/time-zone-names.js';

export const tierSchema = z.enum(TIERS);
export const roleSchema = z.enum(['admin', 'member']);
const email = z.string().trim().toLowerCase().email().max(254);
// Length and strength are checked by the password policy (422 weak_password), not here.
const password = z
  .string()
  .max(PASSWORD_MAX_LENGTH)
  .describe('At least 12 characters; common or easily guessed passwords are refused (422 weak_password)');

/** An IANA time zone name (stored as Intl spells it: "america/new_york" is kept as "America/New_York"). */
export const timeZoneSchema = z
  .string()
  .max(64)
  .refine((name) => canonicalTimeZone(name) !== null, {
    message: 'Not a time zone name: use an IANA name such as America/New_York or UTC',
  })
  .describe(
    'An IANA time zone name such as America/New_York, or UTC, in any letter case; stored as IANA spells it today ' +
      '(asia/calcutta → Asia/Kolkata). Abbreviations and old aliases such as EST or US/Eastern are refused.',
  );

export const workspaceSchema = z.object({
  id: z.string(),
  name: z.string(),
  tier: tierSchema,
  organizationId: z.string().nullable(),
  timeZone: z
    .string()
    .nullable()
    .describe(
      "The clinic's IANA time zone: the web app shows and takes calendar times in it whatever zone a device is on. " +
        'Null: not chosen, each device shows its own zone.',
    ),
});
export const userSchema = z.object({ id: z.string(), email: z.string(), name: z.string() });

export const signInBody = z.object({ email, password: z.string().min(1).max(200), workspaceId: z.string().optional() });
export const signInResponse = z.object({ user: userSchema, workspace: workspaceSchema, role: roleSchema });
export const switchWorkspaceBody = z.object({ workspaceId: z.string().min(1) });

export const meResponse = z.object({
  user: userSchema,
  workspace: workspaceSchema,
  role: roleSchema,
  isProvider: z.boolean(),
  workspaces: z.array(z.object({ id: z.string(), name: z.string(), tier: tierSchema, role: roleSchema })),
});

export const createTokenBody = z.object({ name: z.string().trim().min(1).max(100) });
export const tokenSchema = z.object({ id: z.string(), name: z.string(), createdAt: z.string() });
export const createdTokenSchema = tokenSchema.extend({ token: z.string() });
/** A token in the caller's list: when it was last used tells apart tokens of one name (to about a minute). */
export const listedTokenSchema = tokenSchema.extend({ lastUsedAt: z.string().nullable() });

export const memberBody = z.object({
  email,
  name: z.string().trim().min(1).max(200),
  role: roleSchema,
  isProvider: z.boolean().optional(),
  password: password.optional(),
});
export const createWorkspaceBody = z.object({
  name: z.string().trim().min(1).max(200),
  tier: tierSchema,
  organizationId: z.string().optional(),
  timeZone: timeZoneSchema.optional(),
  admin: z.object({ email, name: z.string().trim().min(1).max(200), password: password.optional() }),
});
export const patchWorkspaceBody = z
  .object({
    tier: tierSchema.optional(),
    name: z.string().trim().min(1).max(200).optional(),
    timeZone: timeZoneSchema.nullable().optional(),
  })
  .refine((b) => b.tier !== undefined || b.name !== undefined || b.timeZone !== undefined, {
    message: 'Send tier, name or timeZone',
  });
export const renameWorkspaceBody = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    timeZone: timeZoneSchema
      .nullable()
      .optional()
      .describe("The clinic's IANA time zone (calendar times are shown in it); null clears it (each device's own)."),
    workspaceId: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The workspace the settings were typed for. When the session has moved to another workspace since (a ' +
          'switch in another tab), 409 `workspace_changed` and nothing changes.',
      ),
  })
  .strict()
  .refine((b) => b.name !== undefined || b.timeZone !== undefined, { message: 'Send name or timeZone' });
export const organizationBody = z.object({ name: z.string().trim().min(1).max(200) });
export const organizationSchema = z.object({ id: z.string(), name: z.string() });
export const memberCreatedSchema = z.object({ userId: z.string(), token: z.string() });

export const memberSchema = z.object({
  userId: z.string(),
  name: z.string(),
  email: z.string().nullable().describe('Only for workspace admins; null for members'),
  role: roleSchema,
  isProvider: z.boolean(),
  status: z.enum(['active', 'invited']).describe('`invited` until the invitation is accepted'),
  lastSignInAt: z
    .string()
    .nullable()
    .describe(
      'When the member last signed in to this workspace (or switched to it from another); kept when old sessions are pruned',
    ),
});
export const memberParams = z.object({ userId: z.string().min(1).max(100) });
export const patchMemberBody = z
  .object({ role: roleSchema.optional(), isProvider: z.boolean().optional() })
  .refine((b) => b.role !== undefined || b.isProvider !== undefined, { message: 'Send role or isProvider' });
export const adminTokenSchema = z.object({
  id: z.string(),
  name: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable().describe('When a request last carried it, to about a minute; null if never'),
  userId: z.string().describe('The owner'),
  userName: z.string(),
});

export const invitationBody = z.object({
  email,
  name: z.string().trim().min(1).max(200),
  role: roleSchema,
  isProvider: z.boolean().optional(),
});
export const invitationCreatedSchema = z.object({
  userId: z.string(),
  status: z.literal('invited'),
  replacedEarlier: z
    .boolean()
    .describe('An earlier invitation of this address, still valid, was replaced: the link it mailed no longer works'),
});
const oneTimeToken = z.string().min(1).max(200);
export const acceptInvitationBody = z.object({ token: oneTimeToken, password });
export const invitationLookupQuery = z.object({ token: oneTimeToken });
/** What the invitation page needs before asking for a password; only for the token's holder (the invited e-mail's owner). */
export const invitationLookupSchema = z.object({
  workspace: z.object({ name: z.string() }),
  email: z.string(),
  /**
   * The invited e-mail already has an account with a password (someone returning, or a member of another
   * workspace): accepting asks for that password. Otherwise accepting sets the new account's password.
   */
  existingAccount: z.boolean(),
});
export type InvitationLookup = z.infer<typeof invitationLookupSchema>;
export const passwordResetBody = z.object({ email });
export const passwordResetLookupQuery = z.object({ token: oneTimeToken });
/** What the reset page needs before asking for a password; only for the token's holder (the account's owner). */
export const passwordResetLookupSchema = z.object({
  email: z.string().describe("The account's e-mail (the page hands it to password managers as the username)"),
  firstPassword: z
    .boolean()
    .describe(
      'The account has no password yet (made by an operator call or an invitation not accepted): the link chooses its ' +
        'first one, and confirming signs out nothing (its API tokens keep working)',
    ),
});
export const passwordResetAccepted = z.object({ status: z.literal('accepted') });
export const passwordResetConfirmBody = z.object({ token: oneTimeToken, password });
export const changePasswordBody = z.object({ currentPassword: z.string().min(1).max(200), newPassword: password });

export type CreateWorkspaceInput = z.infer<typeof createWorkspaceBody>;
export type MemberInput = z.infer<typeof memberBody>;
