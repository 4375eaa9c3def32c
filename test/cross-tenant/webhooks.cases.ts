import { sql } from 'drizzle-orm';
import { queryRows, withSystem } from '../../src/platform/db/tenant.js';
import { createPatient } from '../helpers/factories.js';
import type { CrossTenantCase } from './types.js';

export const webhookCases: CrossTenantCase[] = [
  {
    name: 'webhook endpoints, deliveries, replay, inbox',
    async setup(t, owner) {
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/admin/webhooks',
        token: owner.admin.token,
        payload: { url: 'https://93.184.216.34/tenant-a', description: 'tenant A hook' },
      });
      const endpoint = res.json().id as string;
      await createPatient(t, owner.admin.token);
      const [delivery] = await withSystem(t.database.db, (tx) =>
        queryRows<{ event_id: string }>(
          tx,
          sql`SELECT event_id FROM webhook_deliveries WHERE endpoint_id = ${endpoint}`,
        ),
      );
      // One recorded attempt, so the delivery detail route has something of A's to refuse.
      const attempt = 'dlv_01crosstenantattempt0000a';
      await withSystem(t.database.db, (tx) =>
        tx.execute(sql`INSERT INTO webhook_attempts
            (workspace_id, id, endpoint_id, event_id, event_type, attempt, outcome, status, duration_ms, attempted_at,
             request_url, request_headers, response_headers, response_body)
          VALUES (${owner.id}, ${attempt}, ${endpoint}, ${delivery.event_id}, 'patient.created', 1, 'success', 200, 5, now(),
             'https://93.184.216.34/tenant-a', '{"webhook-id":"x"}'::jsonb, '{}'::jsonb, 'ok')`),
      );
      // An inbox item of A's, for the resolve and reopen routes to refuse.
      const item = 'inb_01crosstenantinboxitem00a';
      await withSystem(t.database.db, (tx) =>
        tx.execute(sql`INSERT INTO inbox_items (workspace_id, id, kind, endpoint_id, event_id, event_type, last_status)
          VALUES (${owner.id}, ${item}, 'webhook.dead_lettered', ${endpoint}, ${delivery.event_id}, 'patient.created', 503)`),
      );
      return { endpoint, event: delivery.event_id, attempt, item };
    },
    async attackerSetup(t, attacker) {
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/admin/webhooks',
        token: attacker.admin.token,
        payload: { url: 'https://93.184.216.34/tenant-b', description: 'tenant B hook' },
      });
      return { endpoint: res.json().id as string };
    },
    denied: ({ endpoint, event, attempt, item }, own) => [
      // A's attempt read through A's endpoint id and through B's own endpoint.
      { method: 'GET', url: `/api/v1/admin/webhooks/${endpoint}/deliveries/${attempt}` },
      { method: 'GET', url: `/api/v1/admin/webhooks/${own.endpoint}/deliveries/${attempt}` },
      { method: 'POST', url: `/api/v1/admin/webhooks/${endpoint}/test` },
      // A's event replayed through B's own endpoint.
      { method: 'POST', url: `/api/v1/admin/webhooks/${own.endpoint}/replay/${event}` },
      { method: 'GET', url: `/api/v1/admin/webhooks/${endpoint}` },
      { method: 'PATCH', url: `/api/v1/admin/webhooks/${endpoint}`, payload: { enabled: false } },
      { method: 'DELETE', url: `/api/v1/admin/webhooks/${endpoint}` },
      { method: 'POST', url: `/api/v1/admin/webhooks/${endpoint}/rotate-secret` },
      { method: 'GET', url: `/api/v1/admin/webhooks/${endpoint}/deliveries` },
      { method: 'POST', url: `/api/v1/admin/webhooks/${endpoint}/replay/${event}` },
      { method: 'POST', url: `/api/v1/inbox/${item}/resolve` },
      { method: 'POST', url: `/api/v1/inbox/${item}/reopen` },
    ],
    lists: () => [
      { method: 'GET', url: '/api/v1/admin/webhooks' },
      { method: 'GET', url: '/api/v1/inbox' },
      { method: 'GET', url: '/api/v1/inbox?state=open' },
    ],
    unchanged: ({ endpoint }) => [
      { method: 'GET', url: `/api/v1/admin/webhooks/${endpoint}` },
      { method: 'GET', url: `/api/v1/admin/webhooks/${endpoint}/deliveries` },
      // The item is still open: neither B's resolve nor B's replay of A's event handled it.
      { method: 'GET', url: '/api/v1/inbox?state=open' },
    ],
  },
  {
    name: 'SOAP notes',
    async setup(t, owner) {
      const patient = await createPatient(t, owner.admin.token);
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/notes',
        token: owner.admin.token,
        payload: { patientId: patient.id, subjective: 'private history' },
      });
      return { note: res.json().id, patient: patient.id };
    },
    denied: ({ note, patient }) => [
      // A's patient in B's new note: 422 as for a patient that exists nowhere.
      {
        method: 'POST',
        url: '/api/v1/notes',
        payload: { patientId: patient, subjective: 'mine now' },
        expect: { status: 422, code: 'unknown_patient' },
      },
      { method: 'GET', url: `/api/v1/notes/${note}` },
      { method: 'PATCH', url: `/api/v1/notes/${note}`, payload: { subjective: 'changed by B' } },
      { method: 'POST', url: `/api/v1/notes/${note}/sign` },
    ],
    lists: ({ patient }) => [
      { method: 'GET', url: '/api/v1/notes' },
      { method: 'GET', url: `/api/v1/notes?patientId=${patient}` },
    ],
    unchanged: ({ note }) => [{ method: 'GET', url: `/api/v1/notes/${note}` }],
  },
  {
    name: 'claims',
    async setup(t, owner) {
      const patient = await createPatient(t, owner.admin.token);
      const note = await t.request({
        method: 'POST',
        url: '/api/v1/notes',
        token: owner.admin.token,
        payload: { patientId: patient.id, subjective: 'private history' },
      });
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/claims',
        token: owner.admin.token,
        payload: { patientId: patient.id, payer: 'Acme', amountCents: 5000 },
      });
      return { claim: res.json().id, patient: patient.id, note: note.json().id };
    },
    async attackerSetup(t, attacker) {
      return { patient: (await createPatient(t, attacker.admin.token)).id };
    },
    denied: ({ claim, patient, note }, own) => [
      // A's patient, or A's note on B's own patient, in B's new claim.
      {
        method: 'POST',
        url: '/api/v1/claims',
        payload: { patientId: patient, payer: 'Acme', amountCents: 5000 },
        expect: { status: 422, code: 'unknown_patient' },
      },
      {
        method: 'POST',
        url: '/api/v1/claims',
        payload: { patientId: own.patient, noteId: note, payer: 'Acme', amountCents: 5000 },
        expect: { status: 422, code: 'unknown_note' },
      },
      { method: 'GET', url: `/api/v1/claims/${claim}` },
      { method: 'POST', url: `/api/v1/claims/${claim}/adjudicate`, payload: { outcome: 'paid' } },
    ],
    lists: ({ patient }) => [
      { method: 'GET', url: '/api/v1/claims' },
      { method: 'GET', url: `/api/v1/claims?patientId=${patient}` },
    ],
    unchanged: ({ claim }) => [{ method: 'GET', url: `/api/v1/claims/${claim}` }],
  },
];
