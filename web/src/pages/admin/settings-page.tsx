/** Workspace settings (admins): the name everyone sees; the plan, what it includes and what the next one adds. */
import { useQueryClient } from '@tanstack/react-query';
import { z } from 'zod';
import { api } from '../../api.js';
import { nextPlan, planAdds, planIncludes, planName } from '../../components/plan-features.js';
import { PlanContact } from '../../components/plan-notice.js';
import { TierBadge } from '../../components/tier-badge.js';
import { Button } from '../../components/ui/button.js';
import { applyProblem, FormError, TextInput, useZodForm } from '../../components/ui/form.js';
import { notifySuccess } from '../../components/ui/toast.js';
import { useCurrentMe } from '../../me-context.js';
import type { Tier } from '../../session.js';
import { meQueryKey } from '../../session.js';

const form = z.object({ name: z.string().trim().min(1, 'Give the workspace a name').max(200) });

export function SettingsPage() {
  const me = useCurrentMe();
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
        <NameForm key={me.workspace.id} workspace={me.workspace} />
        <PlanPanel tier={me.workspace.tier} />
      </div>
    </section>
  );
}

/**
 * The plan: what it includes and what the next one adds (web/src/components/plan-features.ts, which mirrors the
 * server's tiers.ts), and who changes it: Atrium's staff, never the app.
 */
const listTitle = { fontSize: 'var(--text-md)', marginBottom: 'var(--space-1)' } as const;
const list = { margin: 0, paddingLeft: '1.25rem', display: 'grid', gap: '2px' } as const;

function PlanPanel({ tier }: { tier: Tier }) {
  const next = nextPlan(tier);
  return (
    <section className="card panel" aria-labelledby="plan-title" data-testid="plan-panel">
      <h2 id="plan-title">
        Plan <TierBadge tier={tier} />
      </h2>
      <div>
        <h3 id="plan-includes" style={listTitle}>
          The {planName(tier)} plan includes
        </h3>
        <ul aria-labelledby="plan-includes" data-testid="plan-includes" style={list}>
          {planIncludes(tier).map((words) => (
            <li key={words}>{words}</li>
          ))}
        </ul>
      </div>
      {next ? (
        <div>
          <h3 id="plan-next" style={listTitle}>
            The {planName(next)} plan adds
          </h3>
          <ul aria-labelledby="plan-next" data-testid="plan-adds" style={list}>
            {planAdds(next).map((words) => (
              <li key={words}>{words}</li>
            ))}
          </ul>
        </div>
      ) : (
        <p className="muted">Enterprise is the highest plan: it includes everything Atrium offers.</p>
      )}
      <p data-testid="plan-who">
        <PlanContact settingsLink={false} />
      </p>
    </section>
  );
}

/**
 * The name of one workspace. A name typed here is never given to another one the session moved to meanwhile: the
 * request names the workspace the tab shows (`X-Atrium-Workspace`, as every request does; the body's `workspaceId`
 * says it again), and a switch in another tab answers 409 `workspace_changed`, which the app's one notice says.
 */
function NameForm({ workspace }: { workspace: { id: string; name: string } }) {
  const queryClient = useQueryClient();
  const f = useZodForm(form, { defaultValues: { name: workspace.name } });
  const onSubmit = f.handleSubmit((values) =>
    api
      .patch<{ name: string }>('/workspace', { name: values.name, workspaceId: workspace.id })
      .then(async (saved) => {
        await queryClient.invalidateQueries({ queryKey: meQueryKey });
        f.reset({ name: saved.name });
        notifySuccess(`The workspace is now called ${saved.name}.`);
      })
      .catch((error) => applyProblem(f, error)),
  );
  return (
    <section className="card panel" aria-labelledby="name-title">
      <h2 id="name-title">Name</h2>
      <form className="form" onSubmit={onSubmit} noValidate data-testid="settings-form">
        <FormError message={f.formState.errors.root?.message} />
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
