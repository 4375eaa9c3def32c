/** The zone the calendar pages show and take times in, for the signed-in workspace (see `displayZone`). */
import { useMemo, useSyncExternalStore } from 'react';
import { useCurrentMe } from '../../me-context.js';
import { type DisplayZone, displayZone, localZone } from './time.js';

/**
 * The device's zone can change while the page is open (a laptop that travels; Chromium changes a live page's
 * zone) and no event says so: it is read again when the page gets the focus or is shown again, and each minute.
 * One set of listeners for every component that asks.
 */
const zoneListeners = new Set<() => void>();
let stopWatching: (() => void) | null = null;
function watchZone(onChange: () => void): () => void {
  zoneListeners.add(onChange);
  if (!stopWatching) {
    const tell = () => {
      for (const listener of zoneListeners) listener();
    };
    window.addEventListener('focus', tell);
    document.addEventListener('visibilitychange', tell);
    const timer = window.setInterval(tell, 60_000);
    stopWatching = () => {
      window.removeEventListener('focus', tell);
      document.removeEventListener('visibilitychange', tell);
      window.clearInterval(timer);
    };
  }
  return () => {
    zoneListeners.delete(onChange);
    if (zoneListeners.size === 0) {
      stopWatching?.();
      stopWatching = null;
    }
  };
}

export function useDisplayZone(): DisplayZone {
  const workspaceZone = useCurrentMe().workspace.timeZone;
  // A string: components render again only when the zone really changed.
  const browser = useSyncExternalStore(watchZone, localZone);
  return useMemo(() => displayZone(workspaceZone, browser), [workspaceZone, browser]);
}
