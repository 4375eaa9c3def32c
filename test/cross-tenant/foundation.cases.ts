import { createPatient } from '../helpers/factories.js';
import type { CrossTenantCase } from './types.js';

export const foundationCases: CrossTenantCase[] = [
  {
    name: 'patients',
    async setup(t, owner) {
      const patient = await createPatient(t, owner.admin.token, { givenName: 'Secret', familyName: 'Patient' });
      return { patient: patient.id, provider: owner.admin.userId };
    },
    async attackerSetup(t, attacker) {
      return { patient: (await createPatient(t, attacker.admin.token)).id };
    },
    denied: ({ patient, provider }, own) => [
      // A's member as the preferred provider of B's patients: 422 as for any non-provider.
      {
        method: 'POST',
        url: '/api/v1/patients',
        payload: { givenName: 'B', familyName: 'Patient', preferredProviderId: provider },
        expect: { status: 422, code: 'unknown_provider' },
      },
      {
        method: 'PATCH',
        url: `/api/v1/patients/${own.patient}`,
        payload: { preferredProviderId: provider },
        expect: { status: 422, code: 'unknown_provider' },
      },
      { method: 'GET', url: `/api/v1/patients/${patient}` },
      { method: 'PATCH', url: `/api/v1/patients/${patient}`, payload: { givenName: 'Hacked' } },
      {
        method: 'POST',
        url: `/api/v1/patients/${patient}/authorizations`,
        payload: { service: 'pt', units: 1, unitMinutes: 30, validFrom: '2026-01-01', validTo: '2026-12-31' },
      },
      { method: 'GET', url: `/api/v1/patients/${patient}/authorizations` },
      {
        method: 'POST',
        url: `/api/v1/patients/${patient}/break-glass`,
        payload: { reason: 'testing isolation rules' },
      },
    ],
    lists: ({ patient }) => [
      { method: 'GET', url: `/api/v1/patients?q=${patient}` },
      { method: 'GET', url: '/api/v1/patients' },
      // The duplicate check by A's patient's exact name finds nothing of A's.
      { method: 'GET', url: '/api/v1/patients?givenName=Secret&familyName=Patient' },
    ],
    unchanged: ({ patient }) => [{ method: 'GET', url: `/api/v1/patients/${patient}` }],
  },
  {
    name: 'api tokens',
    async setup(t, owner) {
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/auth/tokens',
        token: owner.admin.token,
        payload: { name: 'ci' },
      });
      return { token: res.json().id };
    },
    denied: ({ token }) => [{ method: 'DELETE', url: `/api/v1/auth/tokens/${token}` }],
    lists: () => [{ method: 'GET', url: '/api/v1/auth/tokens' }],
  },
  {
    name: 'audit and members',
    async setup(t, owner) {
      const patient = await createPatient(t, owner.admin.token);
      await t.request({
        method: 'POST',
        url: `/api/v1/patients/${patient.id}/break-glass`,
        token: owner.admin.token,
        payload: { reason: 'emergency in the ward' },
      });
      return { patient: patient.id, admin: owner.admin.userId };
    },
    denied: () => [],
    lists: () => [
      { method: 'GET', url: '/api/v1/audit' },
      { method: 'GET', url: '/api/v1/members' },
    ],
  },
];
