/** Lets a user who belongs to several workspaces move between them; everything is refetched after. */
import { useLocation, useNavigate } from '@tanstack/react-router';
import { useId } from 'react';
import { describeError } from '../api.js';
import { type Me, useSwitchWorkspace } from '../session.js';

/** What the calendar's query keeps across a switch: where and how it looks, never an id (a patient's) of the old one. */
const CALENDAR_KEEPS = ['date', 'view', 'scope'];

/**
 * Where a page goes when the workspace changes under it: a page of one record (a patient, a thread, a webhook
 * endpoint) belongs to the old workspace, so its list opens instead; ids in the query (the inbox's conversation,
 * the audit log's patient, the calendar's patient) go too. The calendar keeps its date, view and scope.
 */
export function pathAfterSwitch(pathname: string, search: string): string {
  const record = /^\/(patients|messages|admin\/webhooks)\/[^/]+/.exec(pathname);
  if (record && pathname !== '/patients/new') return `/${record[1]}`;
  if (pathname !== '/calendar') return pathname;
  const from = new URLSearchParams(search);
  const kept = new URLSearchParams();
  for (const key of CALENDAR_KEEPS) {
    const value = from.get(key);
    if (value !== null) kept.set(key, value);
  }
  const query = kept.toString();
  return query ? `${pathname}?${query}` : pathname;
}

export function WorkspaceSwitcher({ me }: { me: Me }) {
  const id = useId();
  const navigate = useNavigate();
  const location = useLocation();
  // Off the old workspace's record before anything is read again (else it is read, and refused, in the new one).
  const switchWorkspace = useSwitchWorkspace(() => {
    const next = pathAfterSwitch(location.pathname, location.searchStr);
    if (next !== `${location.pathname}${location.searchStr}`) void navigate({ to: next, replace: true });
  });
  if (me.workspaces.length < 2) return null;
  return (
    <div className="workspace-switcher">
      <label htmlFor={id} className="nav-heading">
        Switch workspace
      </label>
      <select
        id={id}
        data-testid="workspace-switcher"
        value={me.workspace.id}
        disabled={switchWorkspace.isPending}
        aria-describedby={switchWorkspace.isError ? `${id}-error` : undefined}
        onChange={(event) => switchWorkspace.mutate(event.target.value)}
      >
        {me.workspaces.map((workspace) => (
          // The name alone fits the sidebar (a role suffix pushed it out of sight); the role is in the label.
          <option
            key={workspace.id}
            value={workspace.id}
            label={workspace.name}
            aria-label={`${workspace.name}, ${workspace.role}`}
          >
            {workspace.name}
          </option>
        ))}
      </select>
      {switchWorkspace.isError ? (
        <span id={`${id}-error`} className="field-error" role="alert" data-testid="workspace-switch-error">
          {describeError(switchWorkspace.error)}
        </span>
      ) : null}
    </div>
  );
}
