import { expect } from 'vitest';
import { createPatient } from '../helpers/factories.js';
import type { CrossTenantCase } from './types.js';

export const paymentCases: CrossTenantCase[] = [
  {
    name: 'payments',
    async setup(t, owner) {
      const patient = await createPatient(t, owner.admin.token, { givenName: 'Pays', familyName: 'Hidden' });
      const made = await t.request({
        method: 'POST',
        url: '/api/v1/payments',
        token: owner.admin.token,
        payload: { amountCents: 1500, description: 'secretword copay', patientId: patient.id },
      });
      expect(made.statusCode, made.body).toBe(201);
      return { patient: patient.id, payment: made.json().id };
    },
    denied: ({ patient }) => [
      {
        method: 'POST',
        url: '/api/v1/payments',
        payload: { amountCents: 1500, description: 'x', patientId: patient },
        expect: { status: 422, code: 'unknown_patient' },
      },
    ],
    lists: ({ patient }) => [
      { method: 'GET', url: '/api/v1/payments' },
      { method: 'GET', url: `/api/v1/payments?patientId=${patient}` },
      { method: 'GET', url: '/api/v1/health/banners' },
    ],
    unchanged: () => [{ method: 'GET', url: '/api/v1/payments' }],
  },
];
