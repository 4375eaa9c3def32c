/** Lets a user who belongs to several workspaces move between them; everything is refetched after. */
import { useId } from 'react';
import { describeError } from '../api.js';
import { type Me, useSwitchWorkspace } from '../session.js';

export function WorkspaceSwitcher({ me }: { me: Me }) {
  const id = useId();
  const switchWorkspace = useSwitchWorkspace();
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
