// Identity: sign-in sessions, API tokens, /me, workspace switching, and the operator API.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { requireCtx, SESSION_COOKIE } from '../../platform/auth/authenticate.js';
import { clientNetwork } from '../../platform/http/client-network.js';
import { idParams, noContent, problemResponses } from '../../platform/http-schemas.js';
import { listOf } from '../../platform/pagination.js';
import {
  acceptInvitationBody,
  adminTokenSchema,
  changePasswordBody,
  createdTokenSchema,
  createTokenBody,
  createWorkspaceBody,
  invitationBody,
  invitationCreatedSchema,
  invitationLookupQuery,
  invitationLookupSchema,
  listedTokenSchema,
  memberBody,
  memberCreatedSchema,
  memberParams,
  memberSchema,
  meResponse,
  organizationBody,
  organizationSchema,
  passwordResetAccepted,
  passwordResetBody,
  passwordResetConfirmBody,
  passwordResetLookupQuery,
  passwordResetLookupSchema,
  patchMemberBody,
  patchWorkspaceBody,
  renameWorkspaceBody,
  signInBody,
  signInResponse,
  switchWorkspaceBody,
  workspaceSchema,
} from './schema.js';
import * as service from './service.js';

const PASSWORD_RULES =
  'An optional `password` must have at least 12 characters (at most 200, no composition rules) and not be ' +
  'common or easily guessed (checked with zxcvbn-ts, including against the e-mail and name); otherwise ' +
  '422 `weak_password` with a plain-words `detail`.';

const OPERATOR_MAIL =
  'The person is e-mailed when they join the workspace: an account without a password gets a welcome e-mail naming ' +
  'the workspace, with a one-time link (an invitation, valid 7 days, as `POST /members/invitations` mails) to ' +
  '`{PUBLIC_URL}/accept-invitation?token=…`, where they choose their password and are signed in; choosing it ' +
  'revokes nothing (the `token` answered here keeps working). An account that already had a password gets "You were ' +
  'added to …". A new account given a `password` here, and a change to an existing membership, mail no one.';

export async function identityRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const deps = fastify.atrium;
  const secureCookie = () => (deps.config.publicUrl ?? '').startsWith('https:');
  const setSessionCookie = (reply: FastifyReply, token: string) =>
    reply.setCookie(SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: 'lax',
      secure: secureCookie(),
      path: '/',
      maxAge: Math.floor(deps.config.sessionTtlMs / 1000),
    });

  app.post(
    '/auth/sign-in',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Sign in with e-mail and password; sets the session cookie',
        description:
          'Wrong e-mail and wrong password give the same 401. Failed attempts are throttled: after ' +
          'ATRIUM_SIGNIN_ACCOUNT_LIMIT failures for an account from one client address, each further attempt ' +
          'from that address waits ATRIUM_SIGNIN_BACKOFF, doubling per failure; an account takes at most ' +
          'ATRIUM_SIGNIN_ACCOUNT_CEILING failures and an address at most ATRIUM_SIGNIN_ADDRESS_LIMIT per ' +
          'ATRIUM_SIGNIN_WINDOW. Refused attempts answer 429 `rate_limited` with Retry-After.',
        body: signInBody,
        response: { 200: signInResponse, ...problemResponses },
      },
    },
    async (request, reply) => {
      const result = await service.signIn(deps, {
        ...request.body,
        // Counted per client network: an IPv6 host holds a whole /64, each address of which would be a fresh allowance.
        address: clientNetwork(request.ip),
        requestId: String(request.id),
      });
      setSessionCookie(reply, result.token);
      return { user: result.user, workspace: result.workspace, role: result.role };
    },
  );

  app.get(
    '/auth/invitation',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Look up an invitation by its token, before accepting it',
        description:
          "For the invitation page: the workspace's name, the invited e-mail and `existingAccount` (that account " +
          "already has a password, which accepting asks for; else accepting sets the new account's password). " +
          'The token (in the query, which is never logged) is the e-mailed one; the same 404, 409 ' +
          '`invitation_used` and 410 `invitation_expired` as accepting.',
        querystring: invitationLookupQuery,
        response: { 200: invitationLookupSchema, ...problemResponses },
      },
    },
    async (request) => service.lookupInvitation(deps, request.query.token),
  );

  app.post(
    '/auth/accept-invitation',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Accept an invitation and sign in; sets the session cookie',
        description:
          'The token comes from the invitation e-mail (one use, 7 days). A new account sets its password here ' +
          '(422 `weak_password` when too weak); an account that already has a password must give it (401 if ' +
          'wrong). 409 `invitation_used`, 410 `invitation_expired`, 404 for an unknown token.',
        body: acceptInvitationBody,
        response: { 200: signInResponse, ...problemResponses },
      },
    },
    async (request, reply) => {
      const result = await service.acceptInvitation(deps, request.body);
      setSessionCookie(reply, result.token);
      return { user: result.user, workspace: result.workspace, role: result.role };
    },
  );

  app.post(
    '/auth/password-reset',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Ask for a password-reset link by e-mail',
        description:
          'Always 202 with the same body, whether or not the address has an account (the lookup and mail ' +
          'happen in a background job). The link (`{PUBLIC_URL}/reset-password?token=…`) works once, for 1 hour. ' +
          'An account that has no password yet (made by an operator call without one) is mailed the same kind of ' +
          'link worded as choosing its first password ("Choose your Atrium password"), not as a reset. ' +
          'At most 5 requests per e-mail address and 30 per client address per hour (429 `rate_limited`).',
        body: passwordResetBody,
        response: { 202: passwordResetAccepted, ...problemResponses },
      },
    },
    async (request, reply) => {
      // Per client network, as sign-in: an IPv6 host's other addresses are no fresh allowance for mailing resets.
      await service.requestPasswordReset(deps, request.body.email, clientNetwork(request.ip));
      return reply.status(202).send({ status: 'accepted' as const });
    },
  );

  app.get(
    '/auth/password-reset',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Look up a password-reset link by its token, before using it',
        description:
          "For the reset page: the account's e-mail and `firstPassword` (the account has no password yet, so the " +
          'page asks to choose one rather than reset it). The token (in the query, which is never logged) is the ' +
          'e-mailed one; the same 404, 409 `reset_used` and 410 `reset_expired` as confirming.',
        querystring: passwordResetLookupQuery,
        response: { 200: passwordResetLookupSchema, ...problemResponses },
      },
    },
    async (request) => service.lookupPasswordReset(deps, request.query.token),
  );

  app.post(
    '/auth/password-reset/confirm',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Set a new password from a reset link; every session and API token of the user is revoked',
        description:
          '404 for an unknown token, 409 `reset_used`, 410 `reset_expired`, 422 `weak_password`. Also for the first ' +
          'password of an account that had none (the link then says "choose", not "reset"): the revocation is the ' +
          'same (contract §2a). Accepting a welcome invitation instead revokes nothing.',
        body: passwordResetConfirmBody,
        response: { 204: noContent, ...problemResponses },
      },
    },
    async (request, reply) => {
      await service.confirmPasswordReset(deps, request.body);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/auth/password',
    {
      schema: {
        tags: ['auth'],
        summary: "Change the caller's password",
        description:
          'A wrong `currentPassword` answers 422 `wrong_password`; a weak new one 422 `weak_password`. The ' +
          "user's other browser sessions end (this one and API tokens stay).",
        body: changePasswordBody,
        response: { 204: noContent, ...problemResponses },
      },
    },
    async (request, reply) => {
      await service.changePassword(deps, requireCtx(request), request.sessionId, request.body);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/members/invitations',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['auth'],
        summary: 'Invite someone by e-mail (admins)',
        description:
          'Mails a one-time link `{PUBLIC_URL}/accept-invitation?token=…`, valid 7 days; re-inviting replaces the ' +
          'earlier link (which then answers 404; `replacedEarlier` says whether one was still valid). The invitee ' +
          'is listed with `status: "invited"` until they accept. 409 `already_member`.',
        body: invitationBody,
        response: { 201: invitationCreatedSchema, ...problemResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await service.inviteMember(deps, requireCtx(request), request.body)),
  );

  app.post(
    '/members/:userId/resend-invitation',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['auth'],
        summary: 'Send a pending invitation again with a new link (admins)',
        description:
          'For an invitee listed with `status: "invited"` (an expired invitation too): a new one-time link, valid 7 ' +
          'days from now, is mailed to the same address with the same role and provider flag; the earlier link stops ' +
          'working at once (404), so only the latest e-mail works (`replacedEarlier` says whether the earlier one was ' +
          `still valid). Audited as \`admin_action\` \`members.invite\` with \`resent: true\`. At most ` +
          `${service.RESEND_INVITEE_LIMIT} resends per invitee and ${service.RESEND_WORKSPACE_LIMIT} per workspace an ` +
          'hour (429 `rate_limited` with Retry-After). 404 when this workspace has no pending invitation for the user ' +
          '(also for an invitee of another workspace); 409 `already_member` when they have joined.',
        params: memberParams,
        response: { 201: invitationCreatedSchema, ...problemResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await service.resendInvitation(deps, requireCtx(request), request.params.userId)),
  );

  app.post(
    '/auth/sign-out',
    {
      // A tab showing a workspace the session has left may still sign out.
      config: { anyWorkspace: true },
      schema: { tags: ['auth'], summary: 'End the session', response: { 204: noContent, ...problemResponses } },
    },
    async (request, reply) => {
      if (request.sessionId) await service.signOut(deps, request.sessionId);
      reply.clearCookie(SESSION_COOKIE, { path: '/' });
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/auth/switch-workspace',
    {
      // The target is named in the body: a tab showing a workspace the session has left may switch.
      config: { anyWorkspace: true },
      schema: {
        tags: ['auth'],
        summary: "Move the session to another of the user's workspaces",
        body: switchWorkspaceBody,
        response: { 200: signInResponse, ...problemResponses },
      },
    },
    async (request) => service.switchWorkspace(deps, requireCtx(request), request.sessionId, request.body.workspaceId),
  );

  app.get(
    '/me',
    {
      schema: {
        tags: ['auth'],
        summary: 'The caller, their workspace and memberships',
        response: { 200: meResponse, ...problemResponses },
      },
    },
    async (request) => service.getMe(deps, requireCtx(request)),
  );

  app.get(
    '/members',
    {
      schema: {
        tags: ['auth'],
        summary: "Members of the caller's workspace",
        description: 'Every member may list; `email` is only filled in for workspace admins (null otherwise).',
        response: { 200: listOf(memberSchema), ...problemResponses },
      },
    },
    async (request) => ({ items: await service.listMembers(deps, requireCtx(request)), nextCursor: null }),
  );

  app.patch(
    '/workspace',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['auth'],
        summary: "Change this workspace's name or time zone (admins)",
        description:
          "At least one of `name` and `timeZone`. The time zone is the clinic's (IANA name, stored as Intl spells it; " +
          'null clears it): the web app shows and takes calendar times in it whatever zone a device is on. ' +
          'The tier is changed by the operator only. Audited as `admin_action` `workspace.update`. With ' +
          '`workspaceId` (the workspace the name was typed for), 409 `workspace_changed` when the session is ' +
          'now in another one (switched in another tab), as with the `X-Atrium-Workspace` header on any request.',
        body: renameWorkspaceBody,
        response: { 200: workspaceSchema, ...problemResponses },
      },
    },
    async (request) => {
      const { workspaceId, ...settings } = request.body;
      return service.updateWorkspaceSettings(deps, requireCtx(request), settings, workspaceId);
    },
  );

  app.patch(
    '/members/:userId',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['auth'],
        summary: "Change a member's role or provider flag (admins)",
        description: 'Demoting the last admin answers 409 `last_admin`. Applies to open sessions and tokens at once.',
        params: memberParams,
        body: patchMemberBody,
        response: { 200: memberSchema, ...problemResponses },
      },
    },
    async (request) => service.updateMember(deps, requireCtx(request), request.params.userId, request.body),
  );

  app.delete(
    '/members/:userId',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['auth'],
        summary: 'Remove a member from the workspace (admins)',
        description:
          "The membership ends and the user's API tokens and sessions in this workspace stop working at once " +
          '(open event streams end). Removing the last admin answers 409 `last_admin`. An admin removing ' +
          'themself (leaving) from a browser session keeps that session: it moves to the workspace of theirs they ' +
          'signed in to last (as `POST /auth/switch-workspace`), and ends only when they belong to none; `GET /me` ' +
          'then says where they are.',
        params: memberParams,
        response: { 204: noContent, ...problemResponses },
      },
    },
    async (request, reply) => {
      await service.removeMember(deps, requireCtx(request), request.params.userId, request.sessionId);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/admin/tokens',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['auth'],
        summary: 'Every API token of the workspace with its owner (admins; never the secret)',
        response: { 200: listOf(adminTokenSchema), ...problemResponses },
      },
    },
    async (request) => ({ items: await service.listWorkspaceTokens(deps, requireCtx(request)), nextCursor: null }),
  );

  app.delete(
    '/admin/tokens/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['auth'],
        summary: 'Revoke any API token of the workspace (admins); it stops working at once',
        params: idParams,
        response: { 204: noContent, ...problemResponses },
      },
    },
    async (request, reply) => {
      await service.revokeWorkspaceToken(deps, requireCtx(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/auth/tokens',
    {
      schema: {
        tags: ['auth'],
        summary: 'Create an API token (shown once)',
        body: createTokenBody,
        response: { 201: createdTokenSchema, ...problemResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await service.createApiToken(deps, requireCtx(request), request.body.name)),
  );

  app.get(
    '/auth/tokens',
    {
      schema: {
        tags: ['auth'],
        summary: "The caller's API tokens (without secrets)",
        response: { 200: listOf(listedTokenSchema), ...problemResponses },
      },
    },
    async (request) => ({ items: await service.listApiTokens(deps, requireCtx(request)), nextCursor: null }),
  );

  app.delete(
    '/auth/tokens/:id',
    {
      schema: {
        tags: ['auth'],
        summary: 'Revoke an API token',
        params: idParams,
        response: { 204: noContent, ...problemResponses },
      },
    },
    async (request, reply) => {
      await service.deleteApiToken(deps, requireCtx(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  // ---- Operator API (ATRIUM_OPERATOR_TOKEN only) ----
  const operator = { auth: 'operator' as const };

  app.post(
    '/operator/organizations',
    {
      config: operator,
      schema: {
        tags: ['operator'],
        summary: 'Create an organization (groups workspaces for the HQ view)',
        body: organizationBody,
        response: { 201: organizationSchema, ...problemResponses },
      },
    },
    async (request, reply) => reply.status(201).send(await service.createOrganization(deps, request.body.name)),
  );

  app.post(
    '/operator/workspaces',
    {
      config: operator,
      schema: {
        tags: ['operator'],
        summary: 'Create a workspace with its first admin',
        description: `${PASSWORD_RULES} ${OPERATOR_MAIL}`,
        body: createWorkspaceBody,
        response: { 201: z.object({ workspace: workspaceSchema, admin: memberCreatedSchema }), ...problemResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await service.createWorkspace(deps, request.body, {}, { notify: true })),
  );

  app.patch(
    '/operator/workspaces/:id',
    {
      config: operator,
      schema: {
        tags: ['operator'],
        summary: "Change a workspace's tier, name or time zone",
        params: idParams,
        body: patchWorkspaceBody,
        response: { 200: workspaceSchema, ...problemResponses },
      },
    },
    async (request) => service.patchWorkspace(deps, request.params.id, request.body),
  );

  app.post(
    '/operator/workspaces/:id/members',
    {
      config: operator,
      schema: {
        tags: ['operator'],
        summary: 'Add a member (creates the user when the e-mail is new)',
        description: `${PASSWORD_RULES} ${OPERATOR_MAIL}`,
        params: idParams,
        body: memberBody,
        response: { 201: memberCreatedSchema, ...problemResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await service.addMember(deps, request.params.id, request.body, {}, { notify: true })),
  );
}
