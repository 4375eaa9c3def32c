import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { queryRows, withSystem } from '../../src/platform/db/tenant.js';
import { connectCalendar } from '../helpers/calendar.js';
import { createPatient } from '../helpers/factories.js';
import type { CrossTenantCase } from './types.js';

const WINDOW = 'timeMin=2026-11-23T00:00:00Z&timeMax=2026-11-30T00:00:00Z';

export const calendarCases: CrossTenantCase[] = [
  {
    name: 'calendar connections and events',
    async setup(t, owner) {
      const cal = await connectCalendar(t, owner.admin.token, 'google', `xt-${owner.id}@google.example`);
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/calendar/events',
        token: owner.admin.token,
        payload: {
          calendar: cal.calendarId,
          draft: {
            title: 'secretword',
            start: '2026-11-24T15:00:00Z',
            end: '2026-11-24T16:00:00Z',
            conference: 'meet',
          },
        },
      });
      expect(res.statusCode, res.body).toBe(201);
      const patient = await createPatient(t, owner.admin.token, { givenName: 'Hidden', familyName: 'Patient' });
      const auth = await t.request({
        method: 'POST',
        url: `/api/v1/patients/${patient.id}/authorizations`,
        token: owner.admin.token,
        payload: { service: 'pt', units: 5, unitMinutes: 30, validFrom: '2026-01-01', validTo: '2027-12-31' },
      });
      expect(auth.statusCode, auth.body).toBe(201);
      const task = await t.request({
        method: 'POST',
        url: '/api/v1/tasks',
        token: owner.admin.token,
        payload: { title: 'secretword task', eventId: res.json().eventId },
      });
      expect(task.statusCode, task.body).toBe(201);
      const room = await withSystem(t.app.atrium.db, (tx) =>
        queryRows<{ id: string }>(tx, sql`SELECT id FROM telehealth_rooms WHERE workspace_id = ${owner.id}`),
      );
      const mail = await t.request({
        method: 'POST',
        url: '/api/v1/mail/inbound',
        headers: { 'content-type': 'message/rfc822', authorization: `Bearer ${t.config.operatorToken}` },
        payload: `From: lab@example.test\r\nTo: ${owner.id}@inbound.atrium.local\r\nSubject: secretword\r\n\r\nresults\r\n`,
      });
      expect(mail.statusCode, mail.body).toBe(201);
      return {
        mail: mail.json().id,
        room: room[0].id,
        task: task.json().id,
        connection: cal.connectionId,
        calendar: cal.calendarId,
        event: res.json().eventId,
        patient: patient.id,
        authorization: auth.json().id,
      };
    },
    async attackerSetup(t, attacker) {
      const cal = await connectCalendar(t, attacker.admin.token, 'google', `xt-${attacker.id}@google.example`);
      const patient = await createPatient(t, attacker.admin.token, { givenName: 'Own', familyName: 'Patient' });
      return { calendar: cal.calendarId, patient: patient.id };
    },
    denied: ({ connection, calendar, event, patient, authorization, task, room, mail }, own) => [
      // Reconnecting names the connection to repair: another workspace's is unknown (no consent URL for its account).
      {
        method: 'POST',
        url: '/api/v1/calendar/connections',
        payload: { provider: 'google', connectionId: connection },
      },
      { method: 'GET', url: `/api/v1/mail/messages/${mail}` },
      { method: 'GET', url: `/api/v1/telehealth/rooms/${room}` },
      { method: 'POST', url: `/api/v1/telehealth/rooms/${room}/start` },
      { method: 'POST', url: `/api/v1/telehealth/rooms/${room}/end` },
      { method: 'PATCH', url: `/api/v1/tasks/${task}`, payload: { done: true } },
      { method: 'DELETE', url: `/api/v1/tasks/${task}` },
      {
        method: 'POST',
        url: '/api/v1/tasks',
        payload: { title: 'x', eventId: event },
        expect: { status: 422, code: 'unknown_event' },
      },
      {
        method: 'POST',
        url: '/api/v1/calendar/sessions/from-authorization',
        payload: {
          patientId: patient,
          authorizationId: authorization,
          calendar: own.calendar,
          firstStart: '2027-01-05T14:00:00Z',
          timeZone: 'UTC',
        },
      },
      {
        method: 'POST',
        url: '/api/v1/calendar/sessions/from-authorization',
        payload: {
          patientId: own.patient,
          authorizationId: authorization,
          calendar: own.calendar,
          firstStart: '2027-01-05T14:00:00Z',
          timeZone: 'UTC',
        },
      },
      {
        method: 'POST',
        url: '/api/v1/calendar/sessions/from-authorization',
        payload: {
          patientId: own.patient,
          authorizationId: 'auth_x',
          calendar,
          firstStart: '2027-01-05T14:00:00Z',
          timeZone: 'UTC',
        },
      },
      { method: 'GET', url: `/api/v1/calendar/sessions?patientId=${patient}` },
      {
        method: 'GET',
        url: `/api/v1/calendar/events?timeMin=2026-11-23T00:00:00Z&timeMax=2026-11-30T00:00:00Z&patientId=${patient}`,
      },
      {
        method: 'GET',
        url: `/api/v1/calendar/providers/match?patientId=${patient}&start=2026-12-01T15:00:00Z&end=2026-12-01T16:00:00Z`,
      },
      {
        method: 'POST',
        url: '/api/v1/calendar/events',
        payload: {
          calendar: own.calendar,
          draft: { title: 'x', start: '2026-11-24T15:00:00Z', end: '2026-11-24T16:00:00Z', patientId: patient },
        },
      },
      { method: 'DELETE', url: `/api/v1/calendar/connections/${connection}` },
      {
        method: 'PATCH',
        url: '/api/v1/calendar/events',
        payload: { event, draft: { title: 'taken' } },
        expect: { status: 404, code: 'event_not_found' },
      },
      {
        method: 'PATCH',
        url: `/api/v1/calendar/events?event=${event}`,
        payload: { draft: { status: 'completed' } },
        expect: { status: 404, code: 'event_not_found' },
      },
      {
        method: 'DELETE',
        url: `/api/v1/calendar/events?event=${event}`,
        expect: { status: 404, code: 'event_not_found' },
      },
      {
        method: 'POST',
        url: '/api/v1/calendar/events',
        payload: { calendar, draft: { title: 'x', start: '2026-11-24T15:00:00Z', end: '2026-11-24T16:00:00Z' } },
        expect: { status: 404, code: 'calendar_not_found' },
      },
      {
        method: 'GET',
        url: `/api/v1/calendar/events?${WINDOW}&calendar=${calendar}`,
        expect: { status: 404, code: 'calendar_not_found' },
      },
    ],
    lists: ({ event }) => [
      { method: 'GET', url: '/api/v1/calendar/connections' },
      { method: 'GET', url: '/api/v1/calendar/calendars' },
      { method: 'GET', url: '/api/v1/tasks' },
      { method: 'GET', url: '/api/v1/mail/messages' },
      { method: 'GET', url: `/api/v1/tasks?eventId=${event}` },
      { method: 'GET', url: '/api/v1/calendar/day?date=2026-11-24' },
      { method: 'GET', url: `/api/v1/calendar/events?${WINDOW}` },
    ],
    unchanged: () => [{ method: 'GET', url: '/api/v1/calendar/connections' }],
  },
];
