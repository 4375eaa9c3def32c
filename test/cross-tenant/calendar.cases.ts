import { expect } from 'vitest';
import { connectCalendar } from '../helpers/calendar.js';
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
          draft: { title: 'secretword', start: '2026-11-24T15:00:00Z', end: '2026-11-24T16:00:00Z' },
        },
      });
      expect(res.statusCode, res.body).toBe(201);
      return { connection: cal.connectionId, calendar: cal.calendarId, event: res.json().eventId };
    },
    async attackerSetup(t, attacker) {
      const cal = await connectCalendar(t, attacker.admin.token, 'google', `xt-${attacker.id}@google.example`);
      return { calendar: cal.calendarId };
    },
    denied: ({ connection, calendar, event }) => [
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
    lists: () => [
      { method: 'GET', url: '/api/v1/calendar/connections' },
      { method: 'GET', url: '/api/v1/calendar/calendars' },
      { method: 'GET', url: `/api/v1/calendar/events?${WINDOW}` },
    ],
    unchanged: () => [{ method: 'GET', url: '/api/v1/calendar/connections' }],
  },
];
