// Audit rows in plain words, for the admin audit log and a patient's audit trail alike: what was
// done, where and why, without the internal codes the rows are stored with (those stay in the CSV).
// This is the one place that turns them into words: a code it does not know yet is still written
// as words (dots, dashes and underscores become spaces), never shown raw.

export const AUDIT_KIND_LABELS: Record<string, string> = {
  skill_invocation: 'Assistant skill used',
  token_access: 'Provider token used',
  phi_access: 'Patient information viewed',
  message_send: 'Message sent',
  break_glass: 'Break-glass access',
  admin_action: 'Administrative change',
};

/** Administrative actions. */
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
  'webhooks.test': 'Sent a test event to a webhook endpoint',
  'webhooks.inbox_resolve': 'Resolved a webhooks inbox item without a replay',
  'webhooks.inbox_reopen': 'Opened a resolved webhooks inbox item again',
  'direct_messages.search': 'Searched messages',
  'channel.connected': 'Connected an inbox channel',
  'channel.disconnected': 'Disconnected an inbox channel',
  'payment.requested': 'Requested a payment',
};

/** Where patient information was seen (`phi_access` context). */
const CONTEXTS: Record<string, string> = {
  'patients.record': 'opened their record',
  'direct-messages': 'in a staff message',
  'calendar.appointments': 'their appointments on the calendar',
  'channels.inbox': 'their conversations in the inbox',
  'channels.conversation': 'a conversation with them in the inbox',
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
  'health.refresh': 'renewed the sign-in for the nightly health check',
  'token.exchange': 'connected the account',
  'token.revoke': 'disconnected the account',
};

const PROVIDERS: Record<string, string> = { google: 'Google', microsoft: 'Microsoft', zoom: 'Zoom' };

/** Inbox channels (`channel` of channel rows). */
const CHANNELS: Record<string, string> = {
  whatsapp: 'WhatsApp',
  messenger: 'Messenger',
  instagram: 'Instagram',
  telegram: 'Telegram',
  viber: 'Viber',
  sms: 'SMS',
};

/** The marketplace's skills by slug, as the catalog names them. */
const SKILLS: Record<string, string> = {
  assistant: 'Assistant',
  'authorized-units': 'Authorized units tracker',
  'billing-codes': 'Billing code suggestions',
  'insurance-eligibility': 'Insurance eligibility check',
  'mail-spam-filter': 'Incoming-mail spam filter',
  'patient-intake': 'Patient intake',
  'patient-lookup': 'Patient lookup',
  'soap-structurer': 'SOAP note structurer',
  'telehealth-brief': 'Telehealth pre-call brief',
};

/** What a skill's tool does, as a task. */
const TOOLS: Record<string, string> = {
  lookup_patient: 'look up a patient',
  units_remaining: 'units remaining',
  suggest_codes: 'suggest billing codes',
  suggest_codes_for_note: 'suggest billing codes for a note',
  check_eligibility: 'check eligibility',
  record_coverage: 'record insurance coverage',
  classify_message: 'sort an e-mail as spam or not',
  register_patient: 'register a patient',
  find_patient: 'find a patient',
  structure_note: 'structure a note',
  precall_brief: 'prepare a pre-call brief',
};

/** Who asked for a skill (`via`). */
const VIA: Record<string, string> = {
  chat: 'from the assistant chat',
  api: 'through the API',
  mail: 'on arrived mail',
};

/** Why a skill call was refused or failed (`reason` or `errorCode`). */
const SKILL_PROBLEMS: Record<string, string> = {
  not_found: 'the skill is not installed or has no such tool',
  tier_required: 'the plan does not include this skill',
  scope_denied: 'the skill lacks a permission it needs',
  invalid_input: 'the request did not fit the tool',
  tool_failed: 'the tool failed',
  upstream_failed: 'a service it relies on failed',
  upstream_timeout: 'a service it relies on did not answer in time',
  unavailable: 'a service it relies on was unavailable',
  rate_limited: 'too many requests',
};

type Row = Record<string, unknown>;
const text = (value: unknown) => (typeof value === 'string' && value ? value : undefined);

/** A code no table here knows yet, still in words: `insurance-eligibility` → "insurance eligibility". */
export function codeInWords(code: string): string {
  return code
    .replace(/[._\-›]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const capitalized = (words: string) => (words ? words[0].toUpperCase() + words.slice(1) : words);

export const skillName = (slug: string) => SKILLS[slug] ?? capitalized(codeInWords(slug));
const channelName = (channel: string | undefined) =>
  channel ? (CHANNELS[channel] ?? capitalized(codeInWords(channel))) : undefined;

/** Whether an administrative action has its own words here (a test checks every action the server writes). */
export const hasActionWords = (action: string) => action in ACTIONS;

function adminAction(row: Row, action: string, people: Map<string, string>): string {
  const target = text(row.target);
  const person = (target && people.get(target)) ?? 'a former member';
  switch (action) {
    case 'members.update':
      if (row.role === 'admin') return `Made ${person} an admin`;
      if (row.role === 'member') return `Made ${person} a member (not an admin)`;
      if (row.isProvider === true) return `Marked ${person} as a provider`;
      if (row.isProvider === false) return `Marked ${person} as not a provider`;
      return `Changed the role of ${person}`;
    case 'members.remove':
      return row.invited === true ? `Withdrew the invitation of ${person}` : `Removed ${person}`;
    case 'members.invite':
    case 'members.add':
      return `${ACTIONS[action]} ${person}`;
    case 'channel.connected':
    case 'channel.disconnected': {
      const channel = channelName(text(row.channel));
      const verb = action === 'channel.connected' ? 'Connected' : 'Disconnected';
      return channel
        ? `${verb} ${channel} ${action === 'channel.connected' ? 'to' : 'from'} the inbox`
        : ACTIONS[action];
    }
    case 'marketplace.install':
    case 'marketplace.uninstall':
    case 'marketplace.grants_changed':
      return target ? `${ACTIONS[action]}: ${skillName(target)}` : ACTIONS[action];
    default:
      return ACTIONS[action] ?? capitalized(codeInWords(action));
  }
}

function skillCall(row: Row): string {
  const slug = text(row.slug);
  const tool = text(row.toolName);
  const task = tool ? (TOOLS[tool] ?? codeInWords(tool)) : undefined;
  // An empty slug is a tool the model asked for that no skill has.
  const who = slug ? skillName(slug) : 'Assistant';
  const what = slug || !task ? task : `an unknown tool (${task})`;
  const via = text(row.via);
  return [what ? `${who}: ${what}` : who, via ? VIA[via] : undefined].filter(Boolean).join(' ');
}

/** Work Atrium did on its own, under an actor id of the form `system:<what>`. */
const SYSTEM_ACTORS: Record<string, string> = { mail: 'Atrium (incoming mail)' };

/** Who acted, in words: a member's name, Atrium itself, or a former member. */
export function auditActor(actorUserId: unknown, people: Map<string, string>): string {
  if (typeof actorUserId !== 'string' || !actorUserId) return 'System';
  const system = /^system:(.+)$/.exec(actorUserId)?.[1];
  if (system) return SYSTEM_ACTORS[system] ?? `Atrium (${codeInWords(system)})`;
  return people.get(actorUserId) ?? 'Former member';
}

/** The details of one row in words; `people` names members by user id. */
export function auditDetails(row: Row, people: Map<string, string>): string {
  const parts: string[] = [];
  const action = text(row.action);
  if (action) parts.push(adminAction(row, action, people));
  if (row.kind === 'skill_invocation') parts.push(skillCall(row));
  const context = text(row.context);
  if (context) {
    const skill = /^skills\.(.+)$/.exec(context)?.[1];
    parts.push(CONTEXTS[context] ?? (skill ? `by the assistant skill ${skillName(skill)}` : codeInWords(context)));
  }
  if (row.kind === 'message_send') {
    const channel = channelName(text(row.channel));
    if (channel) parts.push(`a reply on ${channel}`);
    else if (row.module === 'direct-messages') parts.push('a staff message');
  }
  const provider = text(row.provider);
  const providerName = provider ? (PROVIDERS[provider] ?? capitalized(codeInWords(provider))) : undefined;
  const reason = text(row.reason);
  if (row.kind === 'token_access') {
    const what = reason ? (TOKEN_REASONS[reason] ?? codeInWords(reason)) : 'used';
    parts.push(`${providerName ? `${providerName}: ` : ''}${what}`);
  } else if (row.kind === 'skill_invocation') {
    const problem = reason ?? text(row.errorCode);
    if (problem) parts.push(SKILL_PROBLEMS[problem] ?? codeInWords(problem));
  } else {
    // Break-glass reasons are the person's own words.
    if (reason) parts.push(`Reason: ${reason}`);
    if (providerName) parts.push(providerName);
  }
  const outcome = text(row.outcome);
  if (outcome && outcome !== 'ok')
    parts.push(outcome === 'denied' ? 'refused' : outcome === 'error' ? 'failed' : outcome);
  return parts.join(' · ');
}
