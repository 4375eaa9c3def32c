/** Install (or change grants): one opt-in checkbox per declared scope, with the skill's reason. */
import { useState } from 'react';
import { ErrorNotice } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { AppDialog } from '../../components/ui/dialog.js';
import { Check } from '../../components/ui/form.js';
import { type CatalogItem, type Install, useInstall } from './marketplace-api.js';

export function InstallDialog({
  skill,
  install,
  onClose,
}: {
  skill: CatalogItem;
  install: Install | null;
  onClose: (message?: string) => void;
}) {
  const mutation = useInstall();
  const [granted, setGranted] = useState<Set<string>>(
    () => new Set(install ? install.grantedScopes : skill.scopes.map((s) => s.scope)),
  );
  const toggle = (scope: string) =>
    setGranted((prev) => {
      const next = new Set(prev);
      if (next.has(scope)) next.delete(scope);
      else next.add(scope);
      return next;
    });
  const toolsUsable = skill.tools.filter((t) => t.requiredScopes.every((s) => granted.has(s)));

  return (
    <AppDialog
      title={`${install ? 'Change access for' : 'Install'} ${skill.name}`}
      description="Grant only what you want this skill to use. Tools that need a scope you leave unchecked stay unavailable."
      isOpen
      onOpenChange={(open) => !open && onClose()}
      testId="install-dialog"
    >
      {skill.scopes.length === 0 ? <p>This skill needs no access to workspace data.</p> : null}
      <ul className="mk-scopes">
        {skill.scopes.map((s) => (
          <li key={s.scope}>
            <Check isSelected={granted.has(s.scope)} onChange={() => toggle(s.scope)} testId={`scope-${s.scope}`}>
              <code>{s.scope}</code>
              <span className="muted mk-scope-reason">{s.reason}</span>
            </Check>
          </li>
        ))}
      </ul>
      <p className="muted" data-testid="usable-tools">
        Usable tools: {toolsUsable.length ? toolsUsable.map((t) => t.name).join(', ') : 'none'}
      </p>
      {mutation.error ? <ErrorNotice error={mutation.error} title="Could not install" /> : null}
      <div className="form-actions">
        <Button variant="secondary" onPress={() => onClose()}>
          Cancel
        </Button>
        <Button
          isDisabled={mutation.isPending}
          data-testid="confirm-install"
          onPress={() =>
            mutation.mutate(
              { slug: skill.slug, scopes: [...granted] },
              {
                onSuccess: () => onClose(install ? `Updated access for ${skill.name}.` : `Installed ${skill.name}.`),
              },
            )
          }
        >
          {install ? 'Save access' : 'Install'}
        </Button>
      </div>
    </AppDialog>
  );
}
