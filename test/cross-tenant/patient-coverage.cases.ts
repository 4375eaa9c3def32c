import { createPatient } from '../helpers/factories.js';
import type { CrossTenantCase } from './types.js';

const coverage = { payerName: 'Acme Health', payerId: 'ACME1', memberId: 'M-SECRET-1', groupNumber: 'G-7' };

export const patientCoverageCases: CrossTenantCase[] = [
  {
    name: 'patient coverage and audit filter',
    async setup(t, owner) {
      const patient = await createPatient(t, owner.admin.token, { mrn: `XT-${Date.now()}` });
      const res = await t.request({
        method: 'PUT',
        url: `/api/v1/patients/${patient.id}/coverage`,
        token: owner.admin.token,
        payload: coverage,
      });
      if (res.statusCode !== 200) throw new Error(`coverage setup failed: ${res.body}`);
      // An audit row in A about the patient, for the audit filter below.
      const glass = await t.request({
        method: 'POST',
        url: `/api/v1/patients/${patient.id}/break-glass`,
        token: owner.admin.token,
        payload: { reason: 'cross-tenant audit filter check' },
      });
      if (glass.statusCode !== 201) throw new Error(`break-glass setup failed: ${glass.body}`);
      return { patient: patient.id };
    },
    denied: ({ patient }) => [
      { method: 'GET', url: `/api/v1/patients/${patient}/coverage` },
      { method: 'PUT', url: `/api/v1/patients/${patient}/coverage`, payload: { ...coverage, memberId: 'HACKED' } },
    ],
    // B's audit log filtered by A's patient: nothing of A's, as JSON or CSV.
    lists: ({ patient }) => [
      { method: 'GET', url: `/api/v1/audit?patientId=${patient}` },
      { method: 'GET', url: `/api/v1/audit?patientId=${patient}&format=csv` },
    ],
    unchanged: ({ patient }) => [{ method: 'GET', url: `/api/v1/patients/${patient}/coverage` }],
  },
];
