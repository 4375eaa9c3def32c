/**
 * Install (or change grants): one opt-in checkbox per declared scope, in plain words with the skill's reason (the
 * scope id small beside it), and what the skill can do with the access ticked.
 */
import { useState } from 'react';
import { ErrorNotice } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { AppDialog } from '../../components/ui/dialog.js';
import { Check } from '../../components/ui/form.js';
import { scopeWords } from './access-words.js';
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
      description="Tick only the access you want this skill to have. What needs access you leave unticked stays off."
      isOpen
      onOpenChange={(open) => !open && onClose()}
      testId="install-dialog"
    >
      {skill.scopes.length === 0 ? <p>This skill needs no access to workspace data.</p> : null}
      <ul className="mk-scopes">
        {skill.scopes.map((s) => (
          <li key={s.scope}>
            <Check isSelected={granted.has(s.scope)} onChange={() => toggle(s.scope)} testId={`scope-${s.scope}`}>
              <span>
                <span className="mk-scope-words">{scopeWords(s.scope)}</span>{' '}
                <code className="mk-scope-id">{s.scope}</code>
              </span>
              <span className="muted mk-scope-reason">{s.reason}</span>
            </Check>
          </li>
        ))}
      </ul>
      <div className="muted" data-testid="usable-tools">
        {toolsUsable.length === 0 ? (
          <p>With this access it can do none of its tasks.</p>
        ) : (
          <>
            <p>
              With this access it can
              {toolsUsable.length < skill.tools.length
                ? ` do ${toolsUsable.length} of its ${skill.tools.length} tasks`
                : ' do all its tasks'}
              :
            </p>
            <ul className="mk-list">
              {toolsUsable.map((t) => (
                <li key={t.name}>{t.description}</li>
              ))}
            </ul>
          </>
        )}
      </div>
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
