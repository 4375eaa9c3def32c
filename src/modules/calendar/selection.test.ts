// Lists ask the providers only for the fields the adapters read (Google `fields`, Graph `$select`):
// the masks come from the adapters' own schemas, the emulators honour them as the providers do, and
// an event carrying every field we show still comes back whole through the list.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectCalendar } from '../../../test/helpers/calendar.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { mintEmulatorTokens } from '../../emulators/calendar/index.js';
import { GOOGLE_LIST_FIELDS } from './providers/google.js';
import { GRAPH_LIST_SELECT } from './providers/microsoft.js';
import { fieldMask, selectList } from './providers/selection.js';

describe('field masks from schemas', () => {
  const schema = z.object({
    id: z.string(),
    start: z.object({ dateTime: z.string().optional(), date: z.string().optional() }),
    attendees: z.array(z.object({ email: z.string(), name: z.string().nullish() })).optional(),
    tags: z.array(z.string()).nullish(),
    meta: z.object({ key: z.object({ type: z.string() }) }).nullish(),
  });

  it('writes Google partial-response syntax, nested objects and arrays of objects included', () => {
    expect(fieldMask(schema)).toBe('id,start(dateTime,date),attendees(email,name),tags,meta(key(type))');
  });

  it('writes Graph $select as the top-level properties', () => {
    expect(selectList(schema)).toBe('id,start,attendees,tags,meta');
  });

  it('covers what the adapters map', () => {
    for (const field of ['summary', 'description', 'location', 'recurringEventId', 'attendees(', 'conferenceData(']) {
      expect(GOOGLE_LIST_FIELDS).toContain(field);
    }
    for (const field of ['subject', 'body', 'location', 'seriesMasterId', 'attendees', 'onlineMeeting']) {
      expect(GRAPH_LIST_SELECT.split(',')).toContain(field);
    }
  });
});

let t: TestApp;
let ws: TestWorkspace;
const cal: Record<string, string> = {};
const WINDOW = { from: '2026-11-23T00:00:00Z', to: '2026-11-30T00:00:00Z' };

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'enterprise' });
  cal.google = (await connectCalendar(t, ws.admin.token, 'google', `sel-${ws.id}@google.example`)).calendarId;
  cal.microsoft = (await connectCalendar(t, ws.admin.token, 'microsoft', `sel-${ws.id}@microsoft.example`)).calendarId;
  for (const provider of ['google', 'microsoft']) {
    const made = await t.request({
      method: 'POST',
      url: '/api/v1/calendar/events',
      token: ws.admin.token,
      payload: {
        calendar: cal[provider],
        draft: {
          title: `Full ${provider}`,
          description: 'Bring the referral letter',
          location: 'Room 4',
          start: '2026-11-24T09:00:00Z',
          end: '2026-11-24T09:30:00Z',
          attendees: [{ email: 'guest@example.test', name: 'Guest' }],
          recurrence: ['RRULE:FREQ=DAILY;COUNT=2'],
          conference: 'auto',
        },
      },
    });
    expect(made.statusCode, made.body).toBe(201);
  }
}, 60_000);
afterAll(async () => t?.close());

describe('emulators honour the selection', () => {
  it('Google keeps only the fields asked for', async () => {
    const token = mintEmulatorTokens('google', `sel-${ws.id}@google.example`).access_token;
    const url = `${t.baseUrl}/_emulators/google/calendar/v3/calendars/primary/events?singleEvents=true&timeMin=${WINDOW.from}&timeMax=${WINDOW.to}`;
    const get = async (extra: string) =>
      (await (await fetch(`${url}${extra}`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
        kind?: string;
        items: Record<string, unknown>[];
      };
    const full = await get('');
    expect(full.kind).toBe('calendar#events');
    expect(Object.keys(full.items[0])).toEqual(expect.arrayContaining(['kind', 'etag', 'htmlLink', 'summary']));
    const partial = await get(`&fields=${encodeURIComponent('items(id,summary,start(dateTime))')}`);
    expect(partial.kind).toBeUndefined();
    expect(partial.items).toHaveLength(full.items.length);
    for (const item of partial.items) {
      expect(Object.keys(item).sort()).toEqual(['id', 'start', 'summary']);
      expect(Object.keys(item.start as object)).toEqual(['dateTime']);
    }
  });

  it('Graph keeps id, @odata.etag and the $select properties', async () => {
    const token = mintEmulatorTokens('microsoft', `sel-${ws.id}@microsoft.example`).access_token;
    const headers = { authorization: `Bearer ${token}` };
    const base = `${t.baseUrl}/_emulators/microsoft/v1.0/me/calendars`;
    const calendarId = ((await (await fetch(base, { headers })).json()) as { value: { id: string }[] }).value[0].id;
    const url = `${base}/${calendarId}/calendarView?startDateTime=${WINDOW.from}&endDateTime=${WINDOW.to}`;
    const full = (await (await fetch(url, { headers })).json()) as { value: Record<string, unknown>[] };
    expect(Object.keys(full.value[0])).toEqual(expect.arrayContaining(['webLink', 'createdDateTime', 'subject']));
    const picked = (await (await fetch(`${url}&$select=subject,start`, { headers })).json()) as {
      value: Record<string, unknown>[];
    };
    expect(picked.value).toHaveLength(full.value.length);
    for (const item of picked.value)
      expect(Object.keys(item).sort()).toEqual(['@odata.etag', 'id', 'start', 'subject']);
  });
});

describe.each(['google', 'microsoft'])('the %s list through the adapter', (provider) => {
  it('still carries every field we show', async () => {
    const res = await t.request({
      method: 'GET',
      url: `/api/v1/calendar/events?timeMin=${WINDOW.from}&timeMax=${WINDOW.to}&calendar=${cal[provider]}`,
      token: ws.admin.token,
    });
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json().items as Record<string, unknown>[];
    expect(items).toHaveLength(2);
    for (const item of items) {
      expect(item).toMatchObject({
        title: `Full ${provider}`,
        description: 'Bring the referral letter',
        location: 'Room 4',
        attendees: [expect.objectContaining({ email: 'guest@example.test' })],
        conference: expect.objectContaining({ product: provider === 'google' ? 'meet' : 'teams' }),
      });
      expect(item.recurringEventId).toEqual(expect.any(String));
    }
  });
});
