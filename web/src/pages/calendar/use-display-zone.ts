/** The zone the calendar pages show and take times in, for the signed-in workspace (see `displayZone`). */
import { useMemo } from 'react';
import { useCurrentMe } from '../../me-context.js';
import { type DisplayZone, displayZone } from './time.js';

export function useDisplayZone(): DisplayZone {
  const workspaceZone = useCurrentMe().workspace.timeZone;
  return useMemo(() => displayZone(workspaceZone), [workspaceZone]);
}
