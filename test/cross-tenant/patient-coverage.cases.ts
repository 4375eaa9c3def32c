import { createPatient } from '../helpers/factories.js';
import type { CrossTenantCase } from './types.js';

const coverage = { payerName: 'Acme Health', payerId: 'ACME1', memberId: 'M-SECRET-1', groupNumber: 'G-7' };

export const patientCoverageCases: CrossTenantCase[] = [
  {
    name: 'patient coverage',
    async setup(t, owner) {
      const patient = await createPatient(t, owner.admin.token, { mrn: `XT-${Date.now()}` });
      const res = await t.request({
        method: 'PUT',
        url: `/api/v1/patients/${patient.id}/coverage`,
        token: owner.admin.token,
        payload: coverage,
      });
      if (res.statusCode !== 200) throw new Error(`coverage setup failed: ${res.body}`);
      return { patient: patient.id };
    },
    denied: ({ patient }) => [
      { method: 'GET', url: `/api/v1/patients/${patient}/coverage` },
      { method: 'PUT', url: `/api/v1/patients/${patient}/coverage`, payload: { ...coverage, memberId: 'HACKED' } },
    ],
    unchanged: ({ patient }) => [{ method: 'GET', url: `/api/v1/patients/${patient}/coverage` }],
  },
];
