/**
 * The one notice of a feature the workspace's plan lacks (Inbox, Messages, Marketplace, Webhooks) and the one
 * sentence of who changes the plan (Settings too). Plans are changed by Atrium's staff (the operator API), never
 * in the app: an admin is told to ask their Atrium contact, a member to ask an admin of the workspace, by name.
 * Information, not an error: no alert role, no request id.
 */
import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { api } from '../api.js';
import { useCurrentMe } from '../me-context.js';
import { PLAN_FEATURES, type PlanFeature, planName } from './plan-features.js';

interface MemberRow {
  userId: string;
  name: string;
  role: 'admin' | 'member';
  status: 'active' | 'invited';
}

/** "a", "a or b", "a, b or c" */
const orList = (items: string[]) =>
  items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;

/** The workspace's admins by name, for a member (every member may list the members; same cache as the pages). */
function useAdminNames(enabled: boolean): string[] {
  const members = useQuery({
    queryKey: ['members'],
    queryFn: ({ signal }) => api.get<{ items: MemberRow[] }>('/members', undefined, signal),
    staleTime: 60_000,
    enabled,
  });
  return (members.data?.items ?? [])
    .filter((m) => m.role === 'admin' && m.status === 'active')
    .map((m) => m.name)
    .sort((a, b) => a.localeCompare(b));
}

/**
 * Who changes the plan, for the reader: "Your Atrium contact changes your plan." (an admin; with a link to Settings
 * unless `settingsLink` is false) or "Ask an admin of Maple Clinic (Ana Ruiz) to change the plan." (a member).
 */
export function PlanContact({ settingsLink = true }: { settingsLink?: boolean }) {
  const me = useCurrentMe();
  const isAdmin = me.role === 'admin';
  const admins = useAdminNames(!isAdmin);
  if (isAdmin) {
    return (
      <span data-testid="plan-contact">
        Your Atrium contact changes your plan.
        {settingsLink ? (
          <>
            {' '}
            <Link to="/admin/settings">Settings</Link> shows what each plan includes.
          </>
        ) : null}
      </span>
    );
  }
  const named = admins.length > 0 && admins.length <= 3 ? ` (${orList(admins)})` : '';
  return (
    <span data-testid="plan-contact">
      Ask an admin of {me.workspace.name}
      {named} to change the plan.
    </span>
  );
}

/**
 * A feature this workspace's plan does not have: `title` names it and its plan, `children` say what it does; the
 * notice adds which plans have it, the workspace's plan, and who can change it.
 */
export function PlanNotice({
  feature,
  title,
  children,
  testId,
}: {
  feature: PlanFeature;
  title: string;
  children: ReactNode;
  testId?: string;
}) {
  const me = useCurrentMe();
  const required = planName(PLAN_FEATURES[feature].minPlan);
  return (
    <div className="notice notice-info plan-notice" data-testid={testId ?? 'plan-notice'}>
      <p className="notice-title">{title}</p>
      <p>
        {children} Included in the {required} plan{required === 'Enterprise' ? '' : ' and above'}; {me.workspace.name}{' '}
        is on the {planName(me.workspace.tier)} plan.
      </p>
      <p>
        <PlanContact />
      </p>
    </div>
  );
}
