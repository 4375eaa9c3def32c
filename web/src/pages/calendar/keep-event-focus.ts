/**
 * Keeps the keyboard's place in the calendar when the event that had the focus goes away: deleted
 * from its dialog (the dialog hands the focus back to an element no longer there) or drawn anew by
 * FullCalendar after the list was read again. Without this the focus falls to the page's body.
 */
import { type RefObject, useCallback, useEffect, useRef } from 'react';
import type { CalendarEvent } from './calendar-api.js';
import { type DisplayZone, dateInput } from './time.js';
import { useDisplayZone } from './use-display-zone.js';

interface FocusedEvent {
  id: string;
  start: number;
  el: Element;
}

/** The element that opens an event: the day list's button, or the time grid's event itself. */
function controlOf(grid: HTMLElement, id: string): HTMLElement | null {
  const chip = grid.querySelector(`[data-event-id="${CSS.escape(id)}"]`);
  return (chip?.closest('button, .fc-event') as HTMLElement | null) ?? null;
}

/**
 * Where the focus goes instead: the same event if it is still shown, else the next one that day (the day as the
 * calendar shows it, in the display zone), or the one before it, else `fallback` (the calendar's "New event"
 * button, or its heading).
 */
function focusNear(
  grid: HTMLElement,
  gone: FocusedEvent,
  events: CalendarEvent[],
  fallback: () => void,
  shownZone: DisplayZone,
) {
  const day = Number.isNaN(gone.start) ? null : dateInput(shownZone.shown(gone.start));
  const sameDay = events
    .filter((e) => e.id !== gone.id && dateInput(shownZone.shown(e.start)) === day)
    .sort((a, b) => Date.parse(a.start) - Date.parse(b.start));
  const candidates = [
    gone.id,
    ...sameDay.filter((e) => Date.parse(e.start) >= gone.start).map((e) => e.id),
    ...sameDay
      .filter((e) => Date.parse(e.start) < gone.start)
      .reverse()
      .map((e) => e.id),
  ];
  for (const id of candidates) {
    const control = controlOf(grid, id);
    if (control) return control.focus();
  }
  fallback();
}

export function useKeepEventFocus(
  gridRef: RefObject<HTMLElement | null>,
  events: CalendarEvent[],
  fallback: () => void,
): { afterDialogClosed: () => () => void } {
  const focused = useRef<FocusedEvent | null>(null);
  const shownZone = useDisplayZone();
  const latest = useRef({ events, fallback, shownZone });
  latest.current = { events, fallback, shownZone };

  const repair = useCallback(() => {
    const grid = gridRef.current;
    const was = focused.current;
    const active = document.activeElement;
    if (!grid || !was || was.el.isConnected || (active && active !== document.body)) return;
    focused.current = null;
    focusNear(grid, was, latest.current.events, latest.current.fallback, latest.current.shownZone);
  }, [gridRef]);

  useEffect(() => {
    const grid = gridRef.current;
    if (!grid) return;
    // Remember the event the focus is on; forget it once the focus goes elsewhere on the page (a
    // dialog opened from the event keeps it remembered: that is where the focus comes back from).
    const onFocusIn = (ev: FocusEvent) => {
      const target = ev.target instanceof Element ? ev.target : null;
      if (!target || target.closest('[role="dialog"], [role="alertdialog"]')) return;
      const chip = grid.contains(target)
        ? target.matches('[data-event-id]')
          ? target
          : target.querySelector('[data-event-id]')
        : null;
      const id = chip?.getAttribute('data-event-id');
      if (!id) {
        focused.current = null;
        return;
      }
      // The dialog may hand the focus back to an event already gone from the list (not yet from the
      // grid): it keeps the start it had.
      const event = latest.current.events.find((e) => e.id === id);
      const start = event ? Date.parse(event.start) : focused.current?.id === id ? focused.current.start : Number.NaN;
      focused.current = { id, start, el: target };
    };
    document.addEventListener('focusin', onFocusIn);
    const observer = new MutationObserver(repair);
    observer.observe(grid, { childList: true, subtree: true });
    return () => {
      document.removeEventListener('focusin', onFocusIn);
      observer.disconnect();
    };
  }, [gridRef, repair]);

  // The dialog gives the focus back in an animation frame of its own; this looks after it, one later.
  const afterDialogClosed = useCallback(() => {
    let frame = requestAnimationFrame(() => {
      frame = requestAnimationFrame(repair);
    });
    return () => cancelAnimationFrame(frame);
  }, [repair]);
  return { afterDialogClosed };
}
