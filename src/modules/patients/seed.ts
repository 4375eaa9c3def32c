// Demo patients of the demo workspaces (identity seeds the workspaces and people first).
import type { FastifyInstance } from 'fastify';
import type { SeedState } from '../../platform/module.js';
import { demoAdminContext, demoTenancy } from '../identity/index.js';
import { addAuthorization, addCoverage, createPatient } from './service.js';

export async function seedPatients(app: FastifyInstance, state: SeedState): Promise<void> {
  const deps = app.atrium;
  const { userIds } = demoTenancy(state);
  const clinicCtx = demoAdminContext(app, state, 'Riverside Clinic');
  const drLee = userIds['dr.lee@riverside.example'];
  const patients = [
    {
      givenName: 'Eleanor',
      familyName: 'Vance',
      dateOfBirth: '1958-03-14',
      mrn: 'RC-1001',
      preferredProviderId: drLee,
    },
    { givenName: 'Marcus', familyName: 'Okafor', dateOfBirth: '1987-11-02', mrn: 'RC-1002' },
    // A second Marcus Okafor (another birth date): the assistant asks which one is meant (contract §4).
    { givenName: 'Marcus', familyName: 'Okafor', dateOfBirth: '1994-05-09', mrn: 'RC-1004' },
    {
      givenName: 'Priya',
      familyName: 'Natarajan',
      dateOfBirth: '2001-07-21',
      mrn: 'RC-1003',
      preferredProviderId: drLee,
    },
  ];
  const created = [];
  for (const p of patients) created.push(await createPatient(deps, clinicCtx, p));
  await addAuthorization(deps, clinicCtx, created[0].id, {
    service: 'physical-therapy',
    units: 12,
    unitMinutes: 45,
    validFrom: '2026-11-01',
    validTo: '2027-02-28',
  });
  // Insurance on file, so the eligibility skill can be tried on the demo (the payer emulator answers); on file
  // since the first of the month before last, so no clinic's zone sees it start tomorrow (as the UTC date would
  // on a US evening).
  const since = new Date();
  since.setUTCMonth(since.getUTCMonth() - 2, 1);
  const effectiveFrom = since.toISOString().slice(0, 10);
  await addCoverage(deps, clinicCtx, created[0].id, {
    effectiveFrom,
    payerName: 'Aetna',
    payerId: 'AETNA',
    memberId: 'W123456789',
    groupNumber: 'GRP-4410',
    planName: 'Choice POS II',
  });
  await addCoverage(deps, clinicCtx, created[1].id, {
    effectiveFrom,
    payerName: 'Blue Cross Blue Shield',
    payerId: 'BCBS',
    memberId: 'XYZ987654321',
    planName: 'PPO Plus',
  });
  await createPatient(deps, demoAdminContext(app, state, 'Harbor Therapy'), {
    givenName: 'Tomas',
    familyName: 'Lindqvist',
    dateOfBirth: '1975-05-30',
    mrn: 'HT-2001',
  });
}
