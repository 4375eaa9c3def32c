/**
 * The one notice for a session moved to another workspace under this tab (a switch in another tab or window):
 * the API answered 409 `workspace_changed` and did nothing. The tab's pages, dialogs and event streams all belong
 * to the workspace it showed, so the notice takes the place of all of them (nothing stale stays on screen or
 * keeps streaming) and offers to reload the tab in the workspace the session is in now.
 */
import { useEffect, useRef, useSyncExternalStore } from 'react';
import { type WorkspaceChange, workspaceChange, workspaceChangeSentence } from '../api.js';
import { Button } from './ui/button.js';
import { pathAfterSwitch } from './workspace-switcher.js';

export function useWorkspaceChange(): WorkspaceChange | null {
  return useSyncExternalStore(workspaceChange.subscribe, workspaceChange.get);
}

/** Reloads the tab in the session's workspace: off a record of the old one, as a switch does. */
function reloadInCurrentWorkspace(): void {
  window.location.assign(pathAfterSwitch(window.location.pathname, window.location.search));
}

export function WorkspaceChangedNotice({ change }: { change: WorkspaceChange }) {
  const heading = useRef<HTMLHeadingElement>(null);
  // Said and focused at once: whatever had the focus (a dialog's button) is gone.
  useEffect(() => heading.current?.focus(), []);
  const now = change.current?.name;
  return (
    <div className="full-page">
      <div className="card full-page-card">
        <div className="notice notice-warning" role="alert" data-testid="workspace-changed">
          <h1 className="notice-title" ref={heading} tabIndex={-1}>
            Workspace switched in another tab
          </h1>
          <p>{workspaceChangeSentence(change)}</p>
          <Button onPress={reloadInCurrentWorkspace} data-testid="workspace-changed-reload">
            {now ? `Reload in ${now}` : 'Reload'}
          </Button>
        </div>
      </div>
    </div>
  );
}
