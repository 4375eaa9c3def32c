/**
 * Marketplace: browse and search skills, see in plain words what a skill does and the access it asks for (scope ids,
 * tool names and the version under Technical details), install with opt-in access, chat.
 */
import { useEffect, useId, useRef, useState } from 'react';
import { planAtLeast, planName } from '../../components/plan-features.js';
import { PlanContact, PlanNotice } from '../../components/plan-notice.js';
import { EmptyState, ErrorNotice, Loading, SuccessNotice } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { ConfirmDialog } from '../../components/ui/dialog.js';
import { useDebounced } from '../../components/use-debounced.js';
import type { Me } from '../../session.js';
import { refocusIfLost } from '../admin/revoke-token-dialog.js';
import { scopesInWords, scopeWords } from './access-words.js';
import { ChatPanel } from './chat-panel.js';
import { InstallDialog } from './install-dialog.js';
import { type CatalogItem, useCatalog, useInstalled, useModule, useUninstall } from './marketplace-api.js';
import './marketplace.css';

const CATEGORIES = ['', 'billing', 'clinical', 'mail', 'internal'];

export function MarketplacePage({ me }: { me: Me }) {
  const searchId = useId();
  const categoryId = useId();
  const [search, setSearch] = useState('');
  const [category, setCategory] = useState('');
  const q = useDebounced(search.trim(), 250);
  const catalog = useCatalog(q, category);
  const installed = useInstalled();
  const [selected, setSelected] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const isAdmin = me.role === 'admin';

  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <div>
          <h1 id="page-title">Marketplace</h1>
          <p className="muted">Skills the assistant can use, each limited to the access you grant.</p>
        </div>
        {installed.data ? (
          <p className="mk-count" data-testid="install-count">
            {installed.data.limit === null
              ? `${installed.data.activeCount} ${installed.data.activeCount === 1 ? 'skill' : 'skills'} in use on the ${planName(installed.data.tier)} plan (no limit)`
              : `${installed.data.activeCount} of ${installed.data.limit} skills in use on the ${planName(installed.data.tier)} plan`}
          </p>
        ) : null}
      </header>
      {me.workspace.tier === 'free' ? (
        <PlanNotice
          feature="marketplace_install"
          title="Installing skills comes with the Standard plan"
          testId="free-banner"
        >
          Skills let the assistant do more for your team, such as looking up patients or checking insurance. Everyone
          can browse them here.
        </PlanNotice>
      ) : null}
      {notice ? <SuccessNotice onDismiss={() => setNotice(null)}>{notice}</SuccessNotice> : null}
      <div className="mk-layout">
        <div className="card">
          <div className="mk-toolbar">
            <label htmlFor={searchId} className="visually-hidden">
              Search skills
            </label>
            <input
              id={searchId}
              type="search"
              className="search-input"
              placeholder="Search skills"
              value={search}
              onChange={(e) => setSearch(e.target.value)}
              data-testid="skill-search"
            />
            <label htmlFor={categoryId} className="visually-hidden">
              Category
            </label>
            <select
              id={categoryId}
              value={category}
              onChange={(e) => setCategory(e.target.value)}
              data-testid="category"
            >
              {CATEGORIES.map((c) => (
                <option key={c} value={c}>
                  {c ? c[0].toUpperCase() + c.slice(1) : 'All categories'}
                </option>
              ))}
            </select>
          </div>
          {catalog.isPending ? <Loading label="Loading skills…" /> : null}
          {catalog.isError ? <ErrorNotice error={catalog.error} onRetry={() => catalog.refetch()} /> : null}
          {catalog.data && catalog.data.items.length === 0 ? <EmptyState title="No skills match" /> : null}
          <ul className="mk-grid">
            {catalog.data?.items.map((skill) => (
              <li key={skill.slug}>
                <button
                  type="button"
                  className={`mk-tile${selected === skill.slug ? ' mk-tile-selected' : ''}`}
                  onClick={() => setSelected(skill.slug)}
                  data-testid="skill-tile"
                  data-slug={skill.slug}
                >
                  <span className="mk-tile-name">{skill.name}</span>
                  <span className="muted mk-tile-summary">{skill.summary}</span>
                  <span className="mk-tags">
                    <span className="mk-tag">{skill.category}</span>
                    <span className="mk-tag">{planName(skill.minTier)} plan</span>
                    {skill.visibility === 'private' ? <span className="mk-tag">private</span> : null}
                    {skill.installed ? <span className="mk-tag mk-tag-on">installed</span> : null}
                  </span>
                </button>
              </li>
            ))}
          </ul>
        </div>
        <div className="mk-side">
          {selected ? (
            <SkillDetail slug={selected} me={me} isAdmin={isAdmin} onNotice={setNotice} />
          ) : (
            <div className="card">
              <p className="muted">Choose a skill to see what it can do and the access it asks for.</p>
            </div>
          )}
          <InstalledList isAdmin={isAdmin} onNotice={setNotice} />
          {/* Made afresh in another workspace: a conversation of the old one is not found in the new one. */}
          <ChatPanel key={me.workspace.id} />
        </div>
      </div>
    </section>
  );
}

function SkillDetail({
  slug,
  me,
  isAdmin,
  onNotice,
}: {
  slug: string;
  me: Me;
  isAdmin: boolean;
  onNotice: (m: string) => void;
}) {
  const detail = useModule(slug);
  const [dialog, setDialog] = useState(false);
  const article = useRef<HTMLElement>(null);
  const loaded = detail.isSuccess;
  // On a phone the detail sits below the catalog: bring it into view when a skill is chosen.
  useEffect(() => {
    if (loaded && slug && window.matchMedia('(max-width: 900px)').matches) {
      article.current?.scrollIntoView({ block: 'start', behavior: 'smooth' });
    }
  }, [loaded, slug]);
  if (detail.isPending) return <Loading label="Loading skill…" />;
  if (detail.isError) return <ErrorNotice error={detail.error} />;
  const skill = detail.data;
  const tierOk = planAtLeast(me.workspace.tier, skill.minTier) && me.workspace.tier !== 'free';
  // Free installs nothing: a skill open to every plan still needs the Standard plan to be installed.
  const neededPlan = planName(skill.minTier === 'free' ? 'standard' : skill.minTier);
  return (
    <article className="card" data-testid="skill-detail" ref={article}>
      <h2>{skill.name}</h2>
      <p className="muted">
        By {skill.publisher} · {planName(skill.minTier)} plan and above
      </p>
      <h3>What it can do</h3>
      <p data-testid="detail-description">{skill.description}</p>
      <h3>Access it asks for</h3>
      {skill.scopes.length === 0 ? <p className="muted">None: it works only with what you type.</p> : null}
      <ul className="mk-list">
        {skill.scopes.map((s) => (
          <li key={s.scope} data-testid="detail-scope">
            <strong>{scopeWords(s.scope)}</strong>
            {skill.install?.grantedScopes.includes(s.scope) ? <span className="mk-tag mk-tag-on">granted</span> : null}
            <div className="muted">{s.reason}</div>
          </li>
        ))}
      </ul>
      {skill.install?.updateAvailable ? (
        <p className="notice notice-info">
          A newer version is available
          {skill.install.newScopes.length
            ? `, and it also asks to: ${scopesInWords(skill.install.newScopes).toLowerCase()}`
            : ''}
          . Change access to update.
        </p>
      ) : null}
      <details className="mk-technical" data-testid="technical-details">
        <summary>Technical details</summary>
        <p className="muted">Version {skill.version}</p>
        <ul className="mk-list">
          {skill.tools.map((t) => (
            <li key={t.name} data-testid="detail-tool">
              <code>{t.name}</code> — {t.description}
              {t.requiredScopes.length ? <span className="muted"> (needs {t.requiredScopes.join(', ')})</span> : null}
            </li>
          ))}
        </ul>
        {skill.scopes.length ? (
          <p className="muted">Access ids: {skill.scopes.map((s) => s.scope).join(', ')}</p>
        ) : null}
      </details>
      {isAdmin ? (
        tierOk ? (
          <div className="form-actions">
            <Button onPress={() => setDialog(true)} data-testid="open-install">
              {skill.install ? 'Change access' : 'Install'}
            </Button>
          </div>
        ) : (
          <p className="muted" data-testid="tier-hint">
            Installing this skill needs the {neededPlan} plan; {me.workspace.name} is on the{' '}
            {planName(me.workspace.tier)} plan. <PlanContact settingsLink={false} />
          </p>
        )
      ) : skill.install ? (
        <p className="muted" data-testid="member-hint">
          Installed in this workspace. Workspace admins manage its access.
        </p>
      ) : (
        <p className="muted" data-testid="member-hint">
          Ask a workspace admin to install this skill.
        </p>
      )}
      {dialog ? (
        <InstallDialog
          skill={skill}
          install={skill.install}
          onClose={(message) => {
            setDialog(false);
            if (message) onNotice(message);
          }}
        />
      ) : null}
    </article>
  );
}

function InstalledList({ isAdmin, onNotice }: { isAdmin: boolean; onNotice: (m: string) => void }) {
  const installed = useInstalled();
  const uninstall = useUninstall();
  // Skills by their names (the whole catalog, unfiltered); the slug only while it loads.
  const catalog = useCatalog('', '');
  const nameOf = (slug: string) => catalog.data?.items.find((c) => c.slug === slug)?.name ?? slug;
  const [removing, setRemoving] = useState<string | null>(null);
  const list = useRef<HTMLUListElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  /** Where the removed item stood, so the focus can go to the item now in its place. */
  const removedAt = useRef(0);
  // When the dialog closes with its opener gone (the item was uninstalled): the next item's Uninstall (the one
  // before it for the last), or the list's heading once none is left, rather than the page.
  const afterRemoval = {
    get current(): HTMLElement | null {
      const buttons = [...(list.current?.querySelectorAll<HTMLElement>('[data-testid="uninstall"]') ?? [])];
      return buttons[removedAt.current] ?? buttons.at(-1) ?? heading.current;
    },
  };
  const close = () => {
    setRemoving(null);
    refocusIfLost(afterRemoval);
  };
  return (
    <section className="card" aria-label="Installed skills" data-testid="installed-list">
      <h2 tabIndex={-1} ref={heading}>
        Installed
      </h2>
      {installed.data?.items.length === 0 ? <p className="muted">No skills installed yet.</p> : null}
      <ul className="mk-list" ref={list}>
        {installed.data?.items.map((i, n) => (
          <li key={i.slug} data-testid="installed-item" data-slug={i.slug} className="mk-installed">
            <div>
              <strong>{nameOf(i.slug)}</strong>
              <div className="muted" data-testid="installed-access">
                {scopesInWords(i.grantedScopes)}
              </div>
            </div>
            {isAdmin ? (
              <Button
                size="small"
                variant="ghost"
                onPress={() => {
                  removedAt.current = n;
                  setRemoving(i.slug);
                }}
                isDisabled={uninstall.isPending}
                aria-label={`Uninstall ${nameOf(i.slug)}`}
                data-testid="uninstall"
              >
                Uninstall
              </Button>
            ) : null}
          </li>
        ))}
      </ul>
      {uninstall.error ? <ErrorNotice error={uninstall.error} /> : null}
      <ConfirmDialog
        title={`Uninstall ${removing ? nameOf(removing) : ''}?`}
        description="Its tools leave the assistant at once for everyone in this workspace. You can install it again later."
        confirmLabel="Uninstall"
        isOpen={removing !== null}
        onOpenChange={(open) => {
          if (!open) close();
        }}
        pending={uninstall.isPending}
        confirmTestId="confirm-uninstall"
        onConfirm={() => {
          if (!removing) return;
          const name = nameOf(removing);
          uninstall.mutate(removing, {
            onSuccess: () => {
              close();
              onNotice(`Uninstalled ${name}.`);
            },
          });
        }}
      />
    </section>
  );
}

export type { CatalogItem };
