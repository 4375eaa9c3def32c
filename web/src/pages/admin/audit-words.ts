// Audit rows in plain words, for the admin audit log and a patient's audit trail alike: what was
// done, where and why, without the internal codes the rows are stored with (those stay in the CSV).

export const AUDIT_KIND_LABELS: Record<string, string> = {
  skill_invocation: 'Assistant skill used',
  token_access: 'Provider token used',
  phi_access: 'Patient information viewed',
  message_send: 'Message sent',
  break_glass: 'Break-glass access',
  admin_action: 'Administrative change',
};

/** Administrative actions (the raw action name for any not listed). */
const ACTIONS: Record<string, string> = {
  'members.invite': 'Invited',
  'members.accept_invitation': 'Accepted the invitation',
  'members.add': 'Added',
  'members.update': 'Changed the role of',
  'members.remove': 'Removed',
  'tokens.revoke': 'Revoked an API token',
  'workspace.update': 'Renamed the workspace',
  'marketplace.install': 'Installed a skill',
  'marketplace.uninstall': 'Uninstalled a skill',
  'marketplace.grants_changed': 'Changed the permissions of a skill',
  'marketplace.private_skill.create': 'Created a private skill',
  'marketplace.private_skill.update': 'Changed a private skill',
  'marketplace.private_skill.delete': 'Deleted a private skill',
  'webhooks.create': 'Added a webhook endpoint',
  'webhooks.update': 'Changed a webhook endpoint',
  'webhooks.delete': 'Deleted a webhook endpoint',
  'webhooks.rotate_secret': 'Rotated a webhook secret',
  'webhooks.replay': 'Replayed a webhook delivery',
  'direct_messages.search': 'Searched messages',
};

/** Where patient information was seen (`phi_access` context). */
const CONTEXTS: Record<string, string> = {
  'patients.record': 'opened their record',
  'direct-messages': 'in a staff message',
  'calendar.appointments': 'their appointments on the calendar',
  'channels.contact_linked': 'linked an inbox contact to the patient',
  'channels.contact_unlinked': 'unlinked an inbox contact from the patient',
};

/** Why a provider's token was used (`token_access` reason). */
const TOKEN_REASONS: Record<string, string> = {
  'calendar.calendars.list': 'listed the calendars',
  'calendar.events.list': 'read the calendar',
  'calendar.events.create': 'added an event',
  'calendar.events.update': 'changed an event',
  'calendar.events.delete': 'deleted an event',
  'token.refresh': 'renewed the sign-in',
  'token.exchange': 'connected the account',
  'token.revoke': 'disconnected the account',
};

const PROVIDERS: Record<string, string> = { google: 'Google', microsoft: 'Microsoft', zoom: 'Zoom' };

type Row = Record<string, unknown>;
const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** The details of one row in words; `people` names members by user id. */
export function auditDetails(row: Row, people: Map<string, string>): string {
  const parts: string[] = [];
  const action = text(row.action);
  if (action) {
    const words = ACTIONS[action];
    const person = text(row.target) ? people.get(row.target as string) : undefined;
    if (!words) parts.push(action);
    else if (!action.startsWith('members.') || action === 'members.accept_invitation') parts.push(words);
    else parts.push(`${words} ${person ?? 'a former member'}`);
  }
  const slug = text(row.slug);
  if (slug) parts.push(`${slug}${text(row.toolName) ? ` › ${row.toolName}` : ''}`);
  const context = text(row.context);
  if (context) {
    const skill = /^skills\.(.+)$/.exec(context)?.[1];
    parts.push(CONTEXTS[context] ?? (skill ? `by the assistant skill ${skill}` : context.replace(/[-_.]/g, ' ')));
  }
  const provider = text(row.provider);
  const reason = text(row.reason);
  if (row.kind === 'token_access') {
    const what = reason ? (TOKEN_REASONS[reason] ?? reason) : 'used';
    parts.push(`${provider ? `${PROVIDERS[provider] ?? provider}: ` : ''}${what}`);
  } else {
    if (reason) parts.push(`Reason: ${reason}`);
    if (provider) parts.push(PROVIDERS[provider] ?? provider);
  }
  const outcome = text(row.outcome);
  if (outcome && outcome !== 'ok') parts.push(outcome === 'denied' ? 'refused' : outcome);
  return parts.join(' · ');
}
