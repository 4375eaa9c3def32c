// Tasks and the day view (contract §5.3) over the emulators.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectCalendar } from '../../../test/helpers/calendar.js';
import { addMember, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { allPages } from '../../../test/helpers/paging.js';
import { withSystem } from '../../platform/db/tenant.js';
import { newId } from '../../platform/ids.js';
import { calendarTasks } from './tables.js';

let t: TestApp;
let ws: TestWorkspace;
let calendar: string;

const req = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, token = ws.admin.token) =>
  t.request({ method, url: `/api/v1${url}`, token, payload: payload as Record<string, unknown> });

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
  calendar = (await connectCalendar(t, ws.admin.token, 'google', `tasks-${ws.id}@google.example`)).calendarId;
}, 60_000);
afterAll(async () => t?.close());

describe('tasks and the day view', () => {
  it("shows a local day's events with their tasks and the tasks due that day; ticking one done sticks", async () => {
    // 23:30 in New York on Dec 3 is Dec 4 in UTC: it belongs to New York's Dec 3.
    const late = await req('POST', '/calendar/events', {
      calendar,
      draft: { title: 'Late call', start: '2026-12-04T04:30:00Z', end: '2026-12-04T05:00:00Z' },
    });
    const morning = await req('POST', '/calendar/events', {
      calendar,
      draft: { title: 'Morning visit', start: '2026-12-03T15:00:00Z', end: '2026-12-03T15:30:00Z' },
    });
    const other = await req('POST', '/calendar/events', {
      calendar,
      draft: { title: 'Next day', start: '2026-12-04T15:00:00Z', end: '2026-12-04T15:30:00Z' },
    });
    const colleague = await addMember(t, ws, { name: 'Nurse Noor' });
    const prep = await req('POST', '/tasks', {
      title: 'Print intake forms',
      eventId: morning.json().eventId,
      assigneeUserId: colleague.userId,
    });
    expect(prep.statusCode, prep.body).toBe(201);
    expect(prep.json()).toMatchObject({ done: false, assigneeUserId: colleague.userId });
    const due = await req('POST', '/tasks', { title: 'Call the lab', dueAt: '2026-12-03T20:00:00Z' });
    await req('POST', '/tasks', { title: 'For tomorrow', eventId: other.json().eventId });

    const day = await req('GET', '/calendar/day?date=2026-12-03&timeZone=America/New_York');
    expect(day.statusCode, day.body).toBe(200);
    expect(day.json().events.map((e: { title: string }) => e.title)).toEqual(['Morning visit', 'Late call']);
    expect(
      day
        .json()
        .tasks.map((x: { title: string }) => x.title)
        .sort(),
    ).toEqual(['Call the lab', 'Print intake forms']);
    expect(late.statusCode).toBe(201);

    const ticked = await req('PATCH', `/tasks/${due.json().id}`, { done: true });
    expect(ticked.json().done).toBe(true);
    const open = await req('GET', '/tasks?done=false');
    expect(open.json().items.some((x: { id: string }) => x.id === due.json().id)).toBe(false);
    const mine = await req('GET', '/tasks?assignee=me', undefined, colleague.token);
    expect(mine.json().items.map((x: { title: string }) => x.title)).toEqual(['Print intake forms']);
    expect((await req('DELETE', `/tasks/${due.json().id}`)).statusCode).toBe(204);
    expect((await req('DELETE', `/tasks/${due.json().id}`)).statusCode).toBe(404);
  });

  it("today's view carries the open tasks whose day has passed; done ones and other days' views do not", async () => {
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const dueOn = (date: string) => `${date}T17:00:00Z`;
    const left = await req('POST', '/tasks', { title: 'Fax insurance forms', dueAt: dueOn(day(-2)) });
    const finished = await req('POST', '/tasks', { title: 'Call the lab back', dueAt: dueOn(day(-1)) });
    expect((await req('PATCH', `/tasks/${finished.json().id}`, { done: true })).statusCode).toBe(200);
    const titles = async (date: string) =>
      (await req('GET', `/calendar/day?date=${date}&timeZone=UTC`)).json().tasks.map((x: { title: string }) => x.title);
    const today = await titles(day(0));
    expect(today).toContain('Fax insurance forms');
    expect(today).not.toContain('Call the lab back');
    expect(await titles(day(1))).not.toContain('Fax insurance forms');
    expect(await titles(day(-1))).not.toContain('Fax insurance forms');
    expect(await titles(day(-2))).toContain('Fax insurance forms');
    await req('DELETE', `/tasks/${left.json().id}`);
    await req('DELETE', `/tasks/${finished.json().id}`);
  });

  it('refuses an unknown event or assignee and a bad day', async () => {
    const bad = await req('POST', '/tasks', { title: 'x', eventId: 'cev_nope' });
    expect([bad.statusCode, bad.json().code]).toEqual([422, 'unknown_event']);
    // An empty id is not "none" (that is null): it is refused, not stored as a reference to nothing.
    for (const empty of [{ eventId: '' }, { assigneeUserId: '' }]) {
      const res = await req('POST', '/tasks', { title: 'x', ...empty });
      expect([res.statusCode, res.json().code]).toEqual([400, 'validation_failed']);
    }
    const who = await req('POST', '/tasks', { title: 'x', assigneeUserId: 'usr_nobody' });
    expect([who.statusCode, who.json().code]).toEqual([422, 'unknown_assignee']);
    expect((await req('POST', '/tasks', { title: '   ' })).statusCode).toBe(400);
    expect((await req('GET', '/calendar/day?date=2026-12-03&timeZone=Mars/Olympus')).statusCode).toBe(422);
  });

  it('pages the list (contract §1: limit 50 by default, at most 200, opaque cursor) in its order, filters kept', async () => {
    const own = await createWorkspace(t, { tier: 'standard' });
    // 260 tasks: open and done, due or not, many sharing a due time to the microsecond (the id breaks the tie).
    const dues = [null, '2026-12-01T09:00:00.123456Z', '2026-12-01T09:00:00.123457Z', '2026-11-30T08:00:00Z'];
    const rows = Array.from({ length: 260 }, (_, i) => ({
      workspaceId: own.id,
      id: newId('tsk'),
      title: `Task ${i}`,
      eventId: i % 3 === 0 ? 'cev_paging' : null,
      done: i % 5 === 0,
      createdBy: own.admin.userId,
      due: dues[i % dues.length],
    }));
    await withSystem(t.app.atrium.db, (tx) =>
      tx
        .insert(calendarTasks)
        .values(rows.map(({ due, ...r }) => ({ ...r, dueAt: due ? sql`${due}::timestamptz` : null }))),
    );
    const list = (query: string) => t.request({ method: 'GET', url: `/api/v1/tasks${query}`, token: own.admin.token });
    const all = (query: string, limit: number) =>
      allPages(t, { url: '/api/v1/tasks', token: own.admin.token, query, limit });
    // Open first, then by due time (none last), then id.
    const key = (r: (typeof rows)[number]) => `${r.done ? 1 : 0} ${r.due ?? '9999'} ${r.id}`;
    const expected = (keep: (r: (typeof rows)[number]) => boolean) =>
      rows
        .filter(keep)
        .sort((a, b) => (key(a) < key(b) ? -1 : 1))
        .map((r) => r.id);

    const first = await list('');
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().items).toHaveLength(50);
    expect(first.json().nextCursor).toEqual(expect.any(String));
    expect((await list('?limit=200')).json().items).toHaveLength(200);
    expect(await all('', 200)).toEqual(expected(() => true));
    expect(await all('', 7)).toEqual(expected(() => true));
    expect(await all('done=false', 30)).toEqual(expected((r) => !r.done));
    expect(await all('eventId=cev_paging', 11)).toEqual(expected((r) => r.eventId === 'cev_paging'));

    const forged = Buffer.from(JSON.stringify([false, 'yesterday', 'tsk_x'])).toString('base64url');
    for (const query of ['limit=0', 'limit=201', 'limit=ten', 'cursor=garbage', `cursor=${forged}`]) {
      const res = await list(`?${query}`);
      expect([res.statusCode, res.json().code], query).toEqual([400, 'validation_failed']);
      expect(res.headers['content-type'], query).toContain('application/problem+json');
    }
  });
});
