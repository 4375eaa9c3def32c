/**
 * Workspace settings (admins): the name everyone sees, the clinic's time zone (the calendar's times), the plan,
 * what it includes and what the next one adds.
 */
import { useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { ComboBox, Input, Label, ListBox, ListBoxItem, Popover, Text } from 'react-aria-components';
import { z } from 'zod';
import { CURRENT_ZONE_NAMES, timeZoneNames } from '../../../../src/platform/time-zone-names.js';
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
import { describeZone } from '../calendar/time.js';

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
        <div style={{ display: 'grid', gap: 'var(--space-4)', alignContent: 'start' }}>
          <NameForm key={me.workspace.id} workspace={me.workspace} />
          <TimeZoneForm key={`${me.workspace.id}:${me.workspace.timeZone}`} workspace={me.workspace} />
        </div>
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

/** The zones one may choose (src/platform/time-zone-names.ts, the server's list too), the device's own among them. */
function knownZones(own: string): string[] {
  const listed = timeZoneNames();
  return listed.includes(own) ? listed : [own, ...listed];
}

/**
 * The clinic's time zone: the calendar shows and takes times in it whatever zone a device is on (a remote biller
 * or an HQ manager sees the 8:30 huddle at 8:30). Unset, each device shows its own zone.
 */
function TimeZoneForm({ workspace }: { workspace: { id: string; timeZone: string | null } }) {
  const queryClient = useQueryClient();
  const device = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  const own = CURRENT_ZONE_NAMES[device] ?? device;
  const zones = useMemo(() => knownZones(own).map((id) => ({ id, words: `${id.replace(/_/g, ' ')}` })), [own]);
  const [text, setText] = useState(workspace.timeZone?.replace(/_/g, ' ') ?? '');
  const [chosen, setChosen] = useState<string | null>(workspace.timeZone);
  const [error, setError] = useState<string | undefined>();
  const [saving, setSaving] = useState(false);
  const shown = useMemo(() => {
    const q = text.trim().toLowerCase().replace(/_/g, ' ');
    if (!q || text === chosen?.replace(/_/g, ' ')) return zones;
    return zones.filter((z) => z.words.toLowerCase().includes(q));
  }, [text, chosen, zones]);

  const save = (timeZone: string | null) => {
    setSaving(true);
    setError(undefined);
    api
      .patch<{ timeZone: string | null }>('/workspace', { timeZone, workspaceId: workspace.id })
      .then(async (saved) => {
        await queryClient.invalidateQueries({ queryKey: meQueryKey });
        notifySuccess(
          saved.timeZone
            ? `Times are now shown in ${describeZone(saved.timeZone)}.`
            : "Times are now shown in each device's own time zone.",
        );
      })
      .catch((err) => setError(err instanceof Error ? err.message : 'The time zone was not saved'))
      .finally(() => setSaving(false));
  };

  return (
    <section className="card panel" aria-labelledby="zone-title" data-testid="time-zone-panel">
      <h2 id="zone-title">Time zone</h2>
      <p className="muted">
        {workspace.timeZone
          ? `Everyone sees times in ${describeZone(workspace.timeZone)} (the calendar, records, messages and logs), whatever zone their device is on.`
          : "Not set: each person sees times in their own device's zone. Set the clinic's zone so the front desk, clinicians working remotely and head office all see the same times."}
      </p>
      <form
        className="form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          if (!chosen) {
            setError('Choose a time zone from the list');
            return;
          }
          save(chosen);
        }}
      >
        <FormError message={error} testId="time-zone-error" />
        <ComboBox
          className="field combo"
          inputValue={text}
          onInputChange={(value) => {
            setText(value);
            if (value !== chosen?.replace(/_/g, ' ')) setChosen(null);
          }}
          selectedKey={chosen}
          onSelectionChange={(key) => {
            if (key === null) return;
            setChosen(String(key));
            setText(String(key).replace(/_/g, ' '));
          }}
          items={shown}
          menuTrigger="focus"
          allowsEmptyCollection
          data-testid="time-zone"
        >
          <Label>Clinic time zone</Label>
          <Input placeholder="Type a city, e.g. New York" />
          <Text slot="description" className="muted field-hint">
            This device is on {describeZone(own)}.
          </Text>
          <Popover className="popover combo-popover" placement="bottom start">
            <ListBox
              className="menu"
              renderEmptyState={() => <p className="muted combo-empty">No time zone matches “{text}”.</p>}
            >
              {(zone: { id: string; words: string }) => (
                <ListBoxItem id={zone.id} className="menu-item" textValue={zone.words}>
                  {zone.words}
                </ListBoxItem>
              )}
            </ListBox>
          </Popover>
        </ComboBox>
        <div className="form-actions">
          <Button
            type="submit"
            isDisabled={saving || !chosen || chosen === workspace.timeZone}
            data-testid="save-time-zone"
          >
            Save
          </Button>
          {!workspace.timeZone && own !== chosen ? (
            <Button variant="secondary" isDisabled={saving} onPress={() => save(own)} data-testid="use-device-zone">
              Use {describeZone(own)}
            </Button>
          ) : null}
          {workspace.timeZone ? (
            <Button variant="secondary" isDisabled={saving} onPress={() => save(null)} data-testid="clear-time-zone">
              Use each device&apos;s zone
            </Button>
          ) : null}
        </div>
      </form>
    </section>
  );
}
