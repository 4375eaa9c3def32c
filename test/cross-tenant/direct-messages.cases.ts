import { expect } from 'vitest';
import { addMember, createPatient } from '../helpers/factories.js';
import type { CrossTenantCase } from './types.js';

export const directMessageCases: CrossTenantCase[] = [
  {
    name: 'direct messages',
    async setup(t, owner) {
      const colleague = await addMember(t, owner, { name: 'Secret Colleague' });
      const patient = await createPatient(t, owner.admin.token, { givenName: 'Hidden', familyName: 'Patient' });
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/direct-messages',
        token: owner.admin.token,
        payload: { recipients: [colleague.userId], body: `secretword about @patient:${patient.id}` },
      });
      expect(res.statusCode, res.body).toBe(201);
      const { threadId, message } = res.json();
      return { thread: threadId, message: message.id, colleague: colleague.userId, patient: patient.id };
    },
    async attackerSetup(t, attacker) {
      const colleague = await addMember(t, attacker, { name: 'B Colleague' });
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/direct-messages',
        token: attacker.admin.token,
        payload: { recipients: [colleague.userId], body: 'hello within B' },
      });
      expect(res.statusCode, res.body).toBe(201);
      return { thread: res.json().threadId, colleague: colleague.userId };
    },
    denied: ({ thread, message, colleague, patient }, own) => [
      // A's ids inside B's own requests: recipients, mentions, cursors and read markers.
      {
        method: 'POST',
        url: '/api/v1/direct-messages',
        payload: { recipients: [colleague], body: 'hello?' },
        expect: { status: 422, code: 'unknown_recipient' },
      },
      {
        method: 'POST',
        url: '/api/v1/direct-messages',
        payload: { recipients: [own.colleague, colleague], body: 'hello?' },
        expect: { status: 422, code: 'unknown_recipient' },
      },
      {
        method: 'POST',
        url: '/api/v1/direct-messages',
        payload: { recipients: [own.colleague], body: `about @patient:${patient}` },
        expect: { status: 422, code: 'unknown_patient' },
      },
      {
        method: 'POST',
        url: `/api/v1/direct-messages/${own.thread}`,
        payload: { body: `about @patient:${patient}` },
        expect: { status: 422, code: 'unknown_patient' },
      },
      {
        method: 'POST',
        url: '/api/v1/direct-messages',
        payload: { threadId: own.thread, body: `about @patient:${patient}` },
        expect: { status: 422, code: 'unknown_patient' },
      },
      {
        method: 'PATCH',
        url: `/api/v1/direct-messages/${own.thread}`,
        payload: { read: true, lastReadMessageId: message },
        expect: { status: 422, code: 'unknown_message' },
      },
      {
        method: 'GET',
        url: `/api/v1/direct-messages/${own.thread}?before=${message}`,
        expect: { status: 400, code: 'validation_failed' },
      },

      { method: 'GET', url: `/api/v1/direct-messages/${thread}` },
      { method: 'GET', url: `/api/v1/direct-messages/${thread}?before=${message}` },
      { method: 'POST', url: `/api/v1/direct-messages/${thread}`, payload: { body: 'intrusion' } },
      { method: 'POST', url: '/api/v1/direct-messages', payload: { threadId: thread, body: 'intrusion' } },
      { method: 'PATCH', url: `/api/v1/direct-messages/${thread}`, payload: { read: true } },
      {
        method: 'PATCH',
        url: `/api/v1/direct-messages/${thread}`,
        payload: { read: true, lastReadMessageId: message },
      },
      { method: 'GET', url: `/api/v1/direct-messages/${thread}/events` },
    ],
    lists: ({ colleague }) => [
      { method: 'GET', url: '/api/v1/direct-messages' },
      { method: 'GET', url: '/api/v1/direct-messages/search?q=secretword' },
      { method: 'GET', url: `/api/v1/direct-messages/search?q=secretword&userId=${colleague}` },
    ],
    unchanged: ({ thread }) => [{ method: 'GET', url: `/api/v1/direct-messages/${thread}` }],
  },
];
