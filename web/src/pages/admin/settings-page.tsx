/** Workspace settings (admins): the name everyone sees; the plan (tier) and what it includes. */
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { z } from 'zod';
import { ApiError, api } from '../../api.js';
import { TierBadge } from '../../components/tier-badge.js';
import { Button } from '../../components/ui/button.js';
import { applyProblem, FormError, TextInput, useZodForm } from '../../components/ui/form.js';
import { notifySuccess } from '../../components/ui/toast.js';
import { useCurrentMe } from '../../me-context.js';
import { meQueryKey } from '../../session.js';

const form = z.object({ name: z.string().trim().min(1, 'Give the workspace a name').max(200) });

const MOVED =
  'This browser has switched to another workspace (perhaps in another tab), so nothing was renamed. The page now ' +
  'shows the current workspace: check its name and save again if you meant to.';

export function SettingsPage() {
  const me = useCurrentMe();
  // Kept here, outside the form that is made again for the workspace the session moved to.
  const [moved, setMoved] = useState(false);
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <div>
          <h1 id="page-title">Workspace settings</h1>
          <p className="muted">What everyone in {me.workspace.name} sees.</p>
        </div>
      </header>
      <div className="split">
        {/* A form of its own per workspace: after a switch it starts again from that workspace's name. */}
        <NameForm
          key={me.workspace.id}
          workspace={me.workspace}
          notice={moved ? MOVED : undefined}
          onMoved={setMoved}
        />
        <section className="card panel" aria-labelledby="plan-title">
          <h2 id="plan-title">Plan</h2>
          <p>
            <TierBadge tier={me.workspace.tier} />
          </p>
          <p className="muted">
            The plan decides which skills, calendars and integrations this workspace can use. Your Atrium contact
            changes it.
          </p>
        </section>
      </div>
    </section>
  );
}

/**
 * The name of one workspace. The save names that workspace (`workspaceId`), so a name typed here is never given to
 * another one the session moved to meanwhile (a switch in another tab answers 409 `workspace_changed`).
 */
function NameForm({
  workspace,
  notice,
  onMoved,
}: {
  workspace: { id: string; name: string };
  /** Why the last save renamed nothing (the session had moved to this workspace meanwhile). */
  notice?: string;
  onMoved: (moved: boolean) => void;
}) {
  const queryClient = useQueryClient();
  const f = useZodForm(form, { defaultValues: { name: workspace.name } });
  const onSubmit = f.handleSubmit((values) =>
    api
      .patch<{ name: string }>('/workspace', { name: values.name, workspaceId: workspace.id })
      .then(async (saved) => {
        await queryClient.invalidateQueries({ queryKey: meQueryKey });
        f.reset({ name: saved.name });
        onMoved(false);
        notifySuccess(`The workspace is now called ${saved.name}.`);
      })
      .catch((error) => {
        if (error instanceof ApiError && error.code === 'workspace_changed') {
          onMoved(true);
          // Read who we are now: the page (and this form, by its key) follows the session's workspace.
          return queryClient.invalidateQueries({ queryKey: meQueryKey });
        }
        applyProblem(f, error);
      }),
  );
  return (
    <section className="card panel" aria-labelledby="name-title">
      <h2 id="name-title">Name</h2>
      <form className="form" onSubmit={onSubmit} noValidate data-testid="settings-form">
        <FormError message={f.formState.errors.root?.message ?? notice} />
        <TextInput control={f.control} name="name" label="Workspace name" isRequired />
        <div className="form-actions">
          <Button
            type="submit"
            isDisabled={f.formState.isSubmitting || !f.formState.isDirty}
            data-testid="save-settings"
          >
            Save
          </Button>
        </div>
      </form>
    </section>
  );
}
