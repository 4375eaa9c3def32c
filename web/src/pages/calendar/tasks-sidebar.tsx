/**
 * The day view's sidebar (and, beside the week holding today, today's): that day's tasks (tick to complete) and a
 * way to add one, for an event or the day.
 */
import { type FormEvent, useId, useRef, useState } from 'react';
import { describeError } from '../../api.js';
import { Button } from '../../components/ui/button.js';
import { Check } from '../../components/ui/form.js';
import { notifyError } from '../../components/ui/toast.js';
import { type CalendarEvent, type Task, useCreateTask, useUpdateTask } from './calendar-api.js';
import { formatTime } from './time.js';
import { useDisplayZone } from './use-display-zone.js';

const formatDueDay = (shown: Date) =>
  new Intl.DateTimeFormat(undefined, { weekday: 'short', month: 'short', day: 'numeric' }).format(shown);

/**
 * Today's list also holds the open tasks whose day has passed (the API carries them), marked overdue. `day` is a
 * shown Date (time.ts): the day in the display zone; due times are shown there too.
 */
export function TasksSidebar({
  day,
  tasks,
  events,
  heading = 'Tasks for the day',
}: {
  day: Date;
  tasks: Task[];
  events: CalendarEvent[];
  /** "Tasks for today" beside the week. */
  heading?: string;
}) {
  const shownZone = useDisplayZone();
  const headingId = useId();
  const titleId = useId();
  const eventId = useId();
  const problemId = useId();
  const titleRef = useRef<HTMLInputElement>(null);
  const [title, setTitle] = useState('');
  // Read out politely once a task is in the list (the button stays where it is, the field empties).
  const [said, setSaid] = useState('');
  const [forEvent, setForEvent] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const create = useCreateTask();
  const update = useUpdateTask();
  // An overdue task ticked done here is no longer today's (the list is open tasks whose day passed):
  // it stays shown, done, until the day changes, so it does not vanish under the hand that ticked it.
  const [kept, setKept] = useState<{ day: number; tasks: Task[] }>({ day: day.getTime(), tasks: [] });
  const keptToday = kept.day === day.getTime() ? kept.tasks : [];
  const listed = [...tasks, ...keptToday.filter((k) => !tasks.some((t) => t.id === k.id))];
  // Each task keeps the place it first had on this day: ticking one (which the server sorts after the open ones)
  // must not slide the next one under the finger that ticked it. A reload or another day sorts afresh.
  const order = useRef<{ day: number; ids: string[] }>({ day: day.getTime(), ids: [] });
  if (order.current.day !== day.getTime()) order.current = { day: day.getTime(), ids: [] };
  for (const task of listed) if (!order.current.ids.includes(task.id)) order.current.ids.push(task.id);
  const place = (task: Task) => order.current.ids.indexOf(task.id);
  const shown = [...listed].sort((a, b) => place(a) - place(b));
  const tick = (task: Task, done: boolean) => {
    if (done) setKept({ day: day.getTime(), tasks: [...keptToday.filter((k) => k.id !== task.id), { ...task, done }] });
    else setKept({ day: day.getTime(), tasks: keptToday.filter((k) => k.id !== task.id) });
    update.mutate({ id: task.id, done }, { onError: (error) => notifyError(error) });
  };
  const titleOf = (id: string | null) => events.find((e) => e.id === id || e.recurringEventId === id)?.title;

  const add = (e: FormEvent) => {
    e.preventDefault();
    // A second press while the first is on its way adds nothing (the button stays focusable meanwhile).
    if (create.isPending) return;
    setSaid('');
    if (!title.trim()) {
      setProblem('Say what needs doing.');
      return titleRef.current?.focus();
    }
    setProblem(null);
    // A task for the day (or an all-day event) is due at the end of the working day; one for a timed
    // event, when the event ends: an unfinished one is carried to Today, overdue, once its visit has passed.
    const event = events.find((e) => e.id === forEvent);
    const ends = event && !event.allDay ? new Date(event.end) : null;
    const due = (
      ends && Number.isFinite(ends.getTime())
        ? ends
        : shownZone.instant(new Date(day.getFullYear(), day.getMonth(), day.getDate(), 17, 0))
    ).toISOString();
    create.mutate(
      forEvent ? { title: title.trim(), eventId: forEvent, dueAt: due } : { title: title.trim(), dueAt: due },
      {
        onSuccess: () => {
          setTitle('');
          setForEvent('');
          setSaid('Task added.');
          // Ready for the next one: typing goes straight into the emptied field.
          titleRef.current?.focus();
        },
        onError: (error) => setProblem(describeError(error)),
      },
    );
  };

  return (
    <section className="card" aria-labelledby={headingId} data-testid="tasks-sidebar">
      <h2 id={headingId}>{heading}</h2>
      {shown.length === 0 ? <p className="muted">Nothing to do yet.</p> : null}
      <ul className="task-list">
        {shown.map((task) => (
          <li key={task.id} className={task.done ? 'task task-done' : 'task'} data-testid="task">
            <Check isSelected={task.done} onChange={(done) => tick(task, done)}>
              {task.title}
            </Check>
            {task.dueAt && shownZone.shown(task.dueAt) < day ? (
              // From an earlier day: its own day, done or not (a time alone would read as today's).
              task.done ? (
                <span className="muted task-meta">Was due {formatDueDay(shownZone.shown(task.dueAt))}</span>
              ) : (
                <span className="task-meta task-overdue">
                  Overdue: was due {formatDueDay(shownZone.shown(task.dueAt))}
                </span>
              )
            ) : (
              <span className="muted task-meta">
                {task.eventId
                  ? (titleOf(task.eventId) ?? 'Event')
                  : task.dueAt
                    ? `Due ${formatTime(shownZone.shown(task.dueAt))}`
                    : ''}
              </span>
            )}
          </li>
        ))}
      </ul>
      <form className="form task-form" onSubmit={add} noValidate>
        <div className="field">
          <label htmlFor={titleId}>New task</label>
          <input
            id={titleId}
            ref={titleRef}
            value={title}
            aria-invalid={problem ? true : undefined}
            aria-describedby={problem ? problemId : undefined}
            onChange={(e) => setTitle(e.target.value)}
            maxLength={500}
            data-testid="task-title"
          />
        </div>
        <div className="field">
          <label htmlFor={eventId}>For</label>
          <select id={eventId} value={forEvent} onChange={(e) => setForEvent(e.target.value)} data-testid="task-event">
            <option value="">The day</option>
            {events.map((e) => (
              <option key={e.id} value={e.id}>
                {e.allDay ? 'All day' : formatTime(shownZone.shown(e.start))} {e.title}
              </option>
            ))}
          </select>
        </div>
        {problem ? (
          <p className="field-error" role="alert" id={problemId}>
            {problem}
          </p>
        ) : null}
        {/* Pending, not disabled: a disabled button would drop the focus to the page while it works. */}
        <Button type="submit" size="small" isPending={create.isPending} data-testid="task-add">
          Add task
        </Button>
        <p className="visually-hidden" role="status" data-testid="task-status">
          {said}
        </p>
      </form>
    </section>
  );
}
