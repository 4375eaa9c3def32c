import { expect } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { connectChannel, deliver, providerId, senderId } from '../helpers/channels.js';
import type { TestWorkspace } from '../helpers/factories.js';
import { createPatient } from '../helpers/factories.js';
import type { CrossTenantCase } from './types.js';

/** A connection with one inbound conversation: its ids. */
async function inbox(t: TestApp, ws: TestWorkspace) {
  const connection = await connectChannel(t, ws.admin.token, 'sms');
  const from = senderId('sms');
  const res = await deliver(t, connection, { id: providerId('sms'), from, text: 'secretword' });
  expect(res.statusCode, res.body).toBe(200);
  const list = await t.request({ method: 'GET', url: '/api/v1/channels/conversations', token: ws.admin.token });
  const conversation = list
    .json()
    .items.find((c: { contact: { externalId: string } }) => c.contact.externalId === from);
  const patient = await createPatient(t, ws.admin.token, { givenName: 'Channel', familyName: 'Patient' });
  return {
    connection: connection.id,
    conversation: conversation.id,
    contact: conversation.contact.id,
    patient: patient.id,
  };
}

export const channelCases: CrossTenantCase[] = [
  {
    name: 'channel connections, conversations, contacts',
    setup: (t, owner) => inbox(t, owner),
    attackerSetup: (t, attacker) => inbox(t, attacker),
    denied: ({ connection, conversation, contact, patient }, own) => [
      { method: 'DELETE', url: `/api/v1/channels/${connection}` },
      { method: 'GET', url: `/api/v1/channels/conversations/${conversation}` },
      { method: 'POST', url: `/api/v1/channels/conversations/${conversation}/messages`, payload: { text: 'hi' } },
      { method: 'POST', url: `/api/v1/channels/conversations/${conversation}/read` },
      { method: 'GET', url: `/api/v1/channels/messages?conversationId=${conversation}` },
      { method: 'PUT', url: `/api/v1/channels/contacts/${contact}/patient`, payload: { patientId: own.patient } },
      {
        method: 'PUT',
        url: `/api/v1/channels/contacts/${own.contact}/patient`,
        payload: { patientId: patient },
        expect: { status: 422, code: 'unknown_patient' },
      },
    ],
    lists: ({ patient }) => [
      { method: 'GET', url: '/api/v1/channels' },
      { method: 'GET', url: '/api/v1/channels/conversations' },
      { method: 'GET', url: `/api/v1/channels/conversations?patientId=${patient}` },
      { method: 'GET', url: '/api/v1/channels/messages' },
    ],
    unchanged: () => [
      { method: 'GET', url: '/api/v1/channels' },
      { method: 'GET', url: '/api/v1/channels/conversations' },
    ],
  },
];
