import { addMember } from '../helpers/factories.js';
import type { CrossTenantCase } from './types.js';

/** Workspace administration (contract §2a): B's admin never reaches A's members or tokens. */
export const identityAdminCases: CrossTenantCase[] = [
  {
    name: 'workspace administration',
    async setup(t, owner) {
      const member = await addMember(t, owner, { name: 'A Member' });
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/auth/tokens',
        token: member.token,
        payload: { name: 'a-ci' },
      });
      const invited = await t.request({
        method: 'POST',
        url: '/api/v1/members/invitations',
        token: owner.admin.token,
        payload: { email: `invitee-${member.userId}@example.test`, name: 'A Invitee', role: 'member' },
      });
      return {
        member: member.userId,
        admin: owner.admin.userId,
        invited: invited.json().userId,
        token: res.json().id,
      };
    },
    denied: ({ member, admin, invited, token }) => [
      { method: 'PATCH', url: `/api/v1/members/${invited}`, payload: { role: 'admin' } },
      { method: 'DELETE', url: `/api/v1/members/${invited}` },
      { method: 'POST', url: `/api/v1/members/${invited}/resend-invitation` },
      { method: 'PATCH', url: `/api/v1/members/${member}`, payload: { role: 'admin' } },
      { method: 'PATCH', url: `/api/v1/members/${admin}`, payload: { role: 'member' } },
      { method: 'DELETE', url: `/api/v1/members/${member}` },
      { method: 'DELETE', url: `/api/v1/members/${admin}` },
      { method: 'DELETE', url: `/api/v1/admin/tokens/${token}` },
    ],
    lists: () => [
      { method: 'GET', url: '/api/v1/members' },
      { method: 'GET', url: '/api/v1/admin/tokens' },
    ],
    unchanged: () => [
      { method: 'GET', url: '/api/v1/members' },
      { method: 'GET', url: '/api/v1/admin/tokens' },
    ],
  },
];
