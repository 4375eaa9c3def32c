// Tasks (contract §5.3) and the day view: a local day's events with, for the sidebar, the tasks of
// those events and the tasks due that day. An event id of another workspace is refused like an
// unknown one, without a provider call (ids.ts).
import { and, asc, eq, gte, inArray, lt, or, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { RequestContext } from '../../platform/context.js';
import { withTenant } from '../../platform/db/tenant.js';
import { AppError, notFound } from '../../platform/errors.js';
import { instantSchema } from '../../platform/http-schemas.js';
import { newId } from '../../platform/ids.js';
import { decodeCursor, exactTime, type Page, toPage } from '../../platform/pagination.js';
import type { AppDeps } from '../../platform/types.js';
import { fromFloating, isTimeZone } from '../../platform/zoned-time.js';
import { isMember } from '../identity/index.js';
import { sessionCache, targets, windowOf } from './events.js';
import { decodeEventId } from './ids.js';
import type { CalendarEvent, Warning } from './schema.js';
import { calendarTasks } from './tables.js';

export interface Task {
  id: string;
  title: string;
  eventId: string | null;
  dueAt: string | null;
  assigneeUserId: string | null;
  done: boolean;
  createdAt: string;
}

type Row = typeof calendarTasks.$inferSelect;
const present = (r: Row): Task => ({
  id: r.id,
  title: r.title,
  eventId: r.eventId,
  dueAt: r.dueAt?.toISOString() ?? null,
  assigneeUserId: r.assigneeUserId,
  done: r.done,
  createdAt: r.createdAt.toISOString(),
});

/** The event must be one of this workspace's calendars (422 `unknown_event` otherwise; nothing is read upstream). */
async function checkEvent(deps: AppDeps, ctx: RequestContext, eventId: string | null | undefined) {
  if (!eventId) return;
  let calendarId: string;
  try {
    calendarId = decodeEventId(eventId).calendarId;
  } catch {
    throw new AppError('unknown_event', 422, 'That event is not in this workspace');
  }
  if (!(await targets(deps, ctx)).some((c) => c.id === calendarId)) {
    throw new AppError('unknown_event', 422, 'That event is not in this workspace');
  }
}

async function checkAssignee(deps: AppDeps, ctx: RequestContext, userId: string | null | undefined) {
  if (!userId) return;
  const ok = await withTenant(deps.db, ctx, (tx) => isMember(tx, ctx.workspaceId, userId));
  if (!ok) throw new AppError('unknown_assignee', 422, 'That person is not a member of this workspace');
}

export async function createTask(
  deps: AppDeps,
  ctx: RequestContext,
  input: { title: string; eventId?: string | null; dueAt?: string | null; assigneeUserId?: string | null },
): Promise<Task> {
  await checkEvent(deps, ctx, input.eventId);
  await checkAssignee(deps, ctx, input.assigneeUserId);
  const [row] = await withTenant(deps.db, ctx, (tx) =>
    tx
      .insert(calendarTasks)
      .values({
        workspaceId: ctx.workspaceId,
        id: newId('tsk'),
        title: input.title,
        eventId: input.eventId ?? null,
        dueAt: input.dueAt ? new Date(input.dueAt) : null,
        assigneeUserId: input.assigneeUserId ?? null,
        createdBy: ctx.userId,
      })
      .returning(),
  );
  return present(row);
}

// The list's order: open first, then by due time (none last), then id. Paged by keyset on that same triple;
// a task without a due time sorts as if due at infinity, so one row comparison covers both. The cursor's time is
// read exactly from the database (platform/pagination.ts says why).
const dueKey = sql`coalesce(${calendarTasks.dueAt}, 'infinity'::timestamptz)`;
const taskCursor = z.tuple([
  z.boolean(),
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
    .pipe(instantSchema)
    .nullable(),
  z.string().regex(/^tsk_[0-9A-Za-z]{1,60}$/),
]);

export async function listTasks(
  deps: AppDeps,
  ctx: RequestContext,
  filter: { eventId?: string; assignee?: string; done?: boolean; limit: number; cursor?: string },
): Promise<Page<Task>> {
  const after = decodeCursor(filter.cursor, taskCursor);
  const where: (SQL | undefined)[] = [eq(calendarTasks.workspaceId, ctx.workspaceId)];
  if (filter.eventId) where.push(eq(calendarTasks.eventId, filter.eventId));
  if (filter.assignee)
    where.push(eq(calendarTasks.assigneeUserId, filter.assignee === 'me' ? ctx.userId : filter.assignee));
  if (filter.done !== undefined) where.push(eq(calendarTasks.done, filter.done));
  if (after) {
    const [done, due, id] = after;
    where.push(
      sql`(${calendarTasks.done}, ${dueKey}, ${calendarTasks.id}) > (${done}, ${due ?? 'infinity'}::timestamptz, ${id})`,
    );
  }
  const rows = await withTenant(deps.db, ctx, (tx) =>
    tx
      .select({ task: calendarTasks, due: exactTime(calendarTasks.dueAt) })
      .from(calendarTasks)
      .where(and(...where))
      .orderBy(asc(calendarTasks.done), asc(dueKey), asc(calendarTasks.id))
      .limit(filter.limit + 1),
  );
  const page = toPage(rows, filter.limit, (r) => [r.task.done, r.due, r.task.id]);
  return { items: page.items.map((r) => present(r.task)), nextCursor: page.nextCursor };
}

export async function updateTask(
  deps: AppDeps,
  ctx: RequestContext,
  id: string,
  patch: { title?: string; dueAt?: string | null; done?: boolean; assigneeUserId?: string | null },
): Promise<Task> {
  await checkAssignee(deps, ctx, patch.assigneeUserId);
  const set: Partial<typeof calendarTasks.$inferInsert> = { updatedAt: new Date() };
  if (patch.title !== undefined) set.title = patch.title;
  if (patch.dueAt !== undefined) set.dueAt = patch.dueAt ? new Date(patch.dueAt) : null;
  if (patch.done !== undefined) set.done = patch.done;
  if (patch.assigneeUserId !== undefined) set.assigneeUserId = patch.assigneeUserId;
  const [row] = await withTenant(deps.db, ctx, (tx) =>
    tx
      .update(calendarTasks)
      .set(set)
      .where(and(eq(calendarTasks.workspaceId, ctx.workspaceId), eq(calendarTasks.id, id)))
      .returning(),
  );
  if (!row) throw notFound('Task');
  return present(row);
}

export async function deleteTask(deps: AppDeps, ctx: RequestContext, id: string): Promise<void> {
  const rows = await withTenant(deps.db, ctx, (tx) =>
    tx
      .delete(calendarTasks)
      .where(and(eq(calendarTasks.workspaceId, ctx.workspaceId), eq(calendarTasks.id, id)))
      .returning({ id: calendarTasks.id }),
  );
  if (rows.length === 0) throw notFound('Task');
}

/**
 * The local day `date` in `timeZone`: its events, and the tasks of those events or due that day.
 * Today's view also carries the open tasks whose day has passed, so nothing left undone drops out of
 * sight (they sort first; the sidebar marks them overdue).
 */
export async function dayView(
  deps: AppDeps,
  ctx: RequestContext,
  query: { date: string; timeZone?: string },
): Promise<{ date: string; timeZone: string; events: CalendarEvent[]; tasks: Task[]; warnings: Warning[] }> {
  const timeZone = query.timeZone ?? 'UTC';
  if (!isTimeZone(timeZone)) throw new AppError('invalid_time_zone', 422, `Unknown time zone ${timeZone}`);
  const midnight = Date.parse(`${query.date}T00:00:00Z`);
  if (!Number.isFinite(midnight)) throw new AppError('invalid_date', 422, 'Use a date like 2026-11-24');
  const from = new Date(fromFloating(midnight, timeZone));
  const to = new Date(fromFloating(midnight + 24 * 3600_000, timeZone));
  const now = Date.now();
  const isToday = from.getTime() <= now && now < to.getTime();
  const { items, warnings } = await windowOf(
    deps,
    ctx,
    await targets(deps, ctx),
    { timeMin: from.toISOString(), timeMax: to.toISOString() },
    sessionCache(deps, ctx, 'calendar.events.list'),
  );
  const ids = [...new Set(items.flatMap((e) => [e.id, e.recurringEventId].filter((v): v is string => Boolean(v))))];
  const rows = await withTenant(deps.db, ctx, (tx) =>
    tx
      .select()
      .from(calendarTasks)
      .where(
        and(
          eq(calendarTasks.workspaceId, ctx.workspaceId),
          or(
            ids.length ? inArray(calendarTasks.eventId, ids) : undefined,
            and(gte(calendarTasks.dueAt, from), lt(calendarTasks.dueAt, to)),
            isToday ? and(eq(calendarTasks.done, false), lt(calendarTasks.dueAt, from)) : undefined,
          ),
        ),
      )
      .orderBy(asc(calendarTasks.done), asc(calendarTasks.dueAt), asc(calendarTasks.id)),
  );
  // An all-day event is its dates (start and end at 00:00Z, end exclusive), wherever the day is seen from: the
  // window (the day's local midnights) also reaches the all-day events of the days either side.
  const events = items.filter(
    (e) => !e.allDay || (e.start.slice(0, 10) <= query.date && query.date < e.end.slice(0, 10)),
  );
  return { date: query.date, timeZone, events, tasks: rows.map(present), warnings };
}
