// The offline model: deterministic "reasoning" for the AI emulator. It picks a tool by the routing
// triggers found in the system message, fills arguments from the user's words by the tool's JSON
// Schema, and after tool results answers from their `summary` (or a compact rendering).

export interface EmuToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface EmuMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content?: string | null;
  tool_calls?: EmuToolCall[];
  tool_call_id?: string;
}

export interface EmuTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: JsonSchema };
}

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema & { enum?: unknown[]; format?: string; pattern?: string }>;
  required?: string[];
}

export type Completion = { content: string; tool_calls?: undefined } | { content: null; tool_calls: EmuToolCall[] };

/** Lines `<tool>: phrase | phrase` after "Routing triggers" in the system message. */
export function parseTriggers(system: string): Map<string, string[]> {
  return phraseLines(system, 'Routing triggers', /^([A-Za-z0-9_-]{1,64}):\s*(.*)$/);
}

/** Lines `<skill name>: phrase | phrase` after "Not installed here": skills the workspace lacks. */
export function parseUninstalled(system: string): Map<string, string[]> {
  return phraseLines(system, 'Not installed here', /^([^:]{1,120}):\s*(.*)$/);
}

/**
 * Lines `<skill name>: phrase | phrase || scope, scope` after "Installed without the access": skills installed
 * here whose tools all lack a grant, with the access they miss.
 */
export function parseWithoutAccess(system: string): Map<string, { phrases: string[]; missing: string }> {
  const out = new Map<string, { phrases: string[]; missing: string }>();
  const at = system.indexOf('Installed without the access');
  if (at < 0) return out;
  for (const line of system.slice(at).split('\n').slice(1)) {
    if (line.trim() === '') break;
    const m = /^([^:]{1,120}):\s*(.*?)\s*\|\|\s*(.*)$/.exec(line.trim());
    if (!m) continue;
    const phrases = m[2]
      .split('|')
      .map((p) => p.trim().toLowerCase())
      .filter(Boolean);
    out.set(m[1], { phrases, missing: m[3] });
  }
  return out;
}

function phraseLines(system: string, heading: string, pattern: RegExp): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const at = system.indexOf(heading);
  if (at < 0) return out;
  for (const line of system.slice(at).split('\n').slice(1)) {
    if (line.trim() === '') break;
    const m = pattern.exec(line.trim());
    if (!m) continue;
    out.set(
      m[1],
      m[2]
        .split('|')
        .map((p) => p.trim().toLowerCase())
        .filter(Boolean),
    );
  }
  return out;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const containsPhrase = (text: string, phrase: string) =>
  new RegExp(`(?<![a-z0-9])${escapeRe(phrase)}(?![a-z0-9])`, 'i').test(text);

function words(name: string): string[] {
  const tool = name.includes('__') ? name.split('__').pop()! : name;
  return tool.split(/[_-]/).filter((w) => w.length > 2);
}

const ID = /\b[a-z]{2,4}_[0-9a-z]{26}\b/g;

/** Fills a tool's arguments from the message; returns the names of required ones it could not fill. */
export function fillArguments(schema: JsonSchema | undefined, text: string, afterTrigger: string) {
  const args: Record<string, unknown> = {};
  const props = schema?.properties ?? {};
  const required = new Set(schema?.required ?? []);
  const ids = text.match(ID) ?? [];
  const capitalised = afterTrigger.match(/\b[A-Z][a-zA-Z'-]+\b/g) ?? [];
  let nameIndex = 0;
  for (const [name, prop] of Object.entries(props)) {
    // Explicit `name: value` / `name=value` wins.
    const explicit = new RegExp(`\\b${escapeRe(name)}\\s*[:=]\\s*("([^"]*)"|[^\\s,;]+)`, 'i').exec(text);
    if (explicit) {
      args[name] =
        prop.type === 'integer' || prop.type === 'number'
          ? Number(explicit[2] ?? explicit[1])
          : (explicit[2] ?? explicit[1]);
      continue;
    }
    if (prop.pattern?.includes('pat_') || /patientid$/i.test(name)) {
      const id = ids.find((i) => i.startsWith('pat_'));
      if (id) args[name] = id;
    } else if (/id$/i.test(name) && prop.type === 'string') {
      const id = ids.find((i) => !i.startsWith('pat_'));
      if (id) args[name] = id;
    } else if (prop.format === 'date') {
      const date = /\b\d{4}-\d{2}-\d{2}\b/.exec(text);
      if (date) args[name] = date[0];
    } else if (prop.enum) {
      const hit = prop.enum.find((v) => typeof v === 'string' && containsPhrase(text, v));
      if (hit !== undefined) args[name] = hit;
    } else if (prop.type === 'integer' || prop.type === 'number') {
      if (required.has(name)) {
        const num = /\b\d+\b/.exec(text);
        if (num) args[name] = Number(num[0]);
      }
    } else if (prop.type === 'string') {
      if (/name$/i.test(name)) {
        if (capitalised[nameIndex]) args[name] = capitalised[nameIndex++];
      } else if (/^(query|q|search)$/i.test(name)) {
        const q = afterTrigger.replace(/^[\s:,-]+|[\s?.!]+$/g, '');
        if (q) args[name] = q;
      } else if (required.has(name)) {
        // The free text the tool works on: after a colon if there is one, else the whole message.
        const colon = text.indexOf(':');
        args[name] = colon >= 0 && colon < 80 ? text.slice(colon + 1).trim() : text;
      }
    }
  }
  const missing = [...required].filter((r) => args[r] === undefined);
  return { args, missing };
}

/** The one patient the lookup found during this turn, if it found exactly one. */
function patientOfTurn(messages: EmuMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0 && messages[i].role !== 'user'; i--) {
    const m = messages[i];
    if (m.role !== 'tool') continue;
    const call = messages
      .slice(0, i)
      .reverse()
      .find((x) => x.tool_calls?.some((c) => c.id === m.tool_call_id))
      ?.tool_calls?.find((c) => c.id === m.tool_call_id);
    if (call?.function.name !== LOOKUP_FUNCTION) continue;
    try {
      const matches = (JSON.parse(m.content ?? '{}') as { matches?: Match[] }).matches ?? [];
      return matches.length === 1 ? matches[0].name : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function answerFromToolResults(messages: EmuMessage[], tools: EmuTool[]): string {
  const who = patientOfTurn(messages);
  let i = messages.length - 1;
  const results: EmuMessage[] = [];
  while (i >= 0 && messages[i].role === 'tool') results.unshift(messages[i--]);
  const calls = messages[i]?.tool_calls ?? [];
  const lines = results.map((r) => {
    const call = calls.find((c) => c.id === r.tool_call_id);
    const name = call?.function.name ?? 'tool';
    let parsed: unknown;
    try {
      parsed = JSON.parse(r.content ?? 'null');
    } catch {
      parsed = r.content;
    }
    const obj = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : undefined;
    const error = obj?.error as { code?: string; detail?: string } | undefined;
    const what = words(name).join(' ') || 'do that';
    if (error) {
      const detail = String(error.detail ?? error.code).replace(/\.$/, '');
      return `I could not ${what}${who ? ` for ${who}` : ''}: ${detail}.`;
    }
    if (typeof obj?.summary === 'string') {
      // Say whom it is about when the tool's own words do not.
      return who && !obj.summary.includes(who) ? `${who}: ${obj.summary}` : obj.summary;
    }
    const text = JSON.stringify(parsed);
    return `${name} returned ${text.length > 300 ? `${text.slice(0, 297)}…` : text}`;
  });
  void tools;
  return lines.join('\n') || 'The tools returned nothing.';
}

/** The assistant's built-in patient lookup (offered when a skill holds patients:read). */
export const LOOKUP_FUNCTION = 'assistant__lookup_patient';

const NOT_NAMES = new Set(
  (
    'check suggest prepare find is what please can could show how does get look brief run give tell who the for and ' +
    'i a an my her his their insurance eligibility billing codes code telehealth pre-call precall video visit note ' +
    'last latest is are was has have mr mrs ms dr doctor patient classify spam email mail units authorization ' +
    'authorizations hi hello thanks thank yes no ok okay which one born mrn'
  ).split(' '),
);

/** "Check Maria Lopez's insurance" → "Maria Lopez": the capitalised words that are not command words. */
export function extractName(text: string): string | undefined {
  const candidates = text.match(/[A-Z][a-zA-Z'\u2019-]+(?:\s+[A-Z][a-zA-Z'\u2019-]+)*/g) ?? [];
  for (const candidate of candidates) {
    const parts = candidate
      .replace(/['\u2019]s\b/g, '')
      .split(/\s+/)
      .filter((w) => w && !NOT_NAMES.has(w.toLowerCase()));
    if (parts.length >= 2 || (parts.length === 1 && !text.trimStart().startsWith(candidate))) return parts.join(' ');
  }
  return undefined;
}

const PRONOUN = /\b(her|his|him|their|them|this patient|the patient|same patient)\b/i;

/** Words that are never part of a name written in lower case ("check maria lopez eligibility"). */
const NOT_LOWERCASE_NAMES = new Set([
  ...NOT_NAMES,
  ...(
    'how many much does do did left remaining remain have has what when where why me us our up new most recent ' +
    'today tomorrow visit call coverage status plan benefits active eligible run start make create write about with ' +
    'on of to in at from by this that these those prior auth intake admit search lookup look soap format structure ' +
    'authorized remaining brief pre call precall telehealth register find show tell give need needs want would ' +
    'patients insurance eligibility billing codes code note notes last latest sheet summary prepare check get'
  ).split(' '),
]);

const titleCase = (w: string) =>
  w.replace(/(^|[-'\u2019])([a-z])/g, (_m, sep: string, c: string) => sep + c.toUpperCase());

/** "check maria lopez insurance eligibility" → "Maria Lopez": the first run of words that are not command words. */
export function extractLowercaseName(text: string): string | undefined {
  // Only before a pronoun: in "codes for her most recent note" the words after "her" are no name.
  const pronoun = PRONOUN.exec(text);
  const before = pronoun ? text.slice(0, pronoun.index) : text;
  const run: string[] = [];
  for (const token of before.split(/\s+/)) {
    const word = token
      .toLowerCase()
      .replace(/['\u2019]s\b.*$/, '')
      .replace(/[^a-z'\u2019-]/g, '');
    const ok = word.length >= 2 && /^[a-z]/.test(word) && !/\d/.test(token) && !NOT_LOWERCASE_NAMES.has(word);
    if (ok) run.push(titleCase(word));
    else if (run.length) break;
    // A possessive or punctuation ends the name: "maria lopez's insurance", "for maria, please".
    if (run.length && /(['\u2019]s|[,:;.?!])$/.test(token)) break;
    if (run.length === 3) break;
  }
  return run.length ? run.join(' ') : undefined;
}
const ASKED_WHICH = 'Which one do you mean?';
const DATE = /\b\d{4}-\d{2}-\d{2}\b/;
const MRN = /\b[A-Z]{1,5}-?\d{2,}\b/;

interface Match {
  patientId: string;
  name: string;
  dateOfBirth: string | null;
  mrn: string | null;
  latestNoteId: string | null;
}

function needsPatient(tool: EmuTool): { patient: boolean; note: boolean } {
  const props = tool.function.parameters?.properties ?? {};
  const required = new Set(tool.function.parameters?.required ?? []);
  return {
    patient: Object.keys(props).some((p) => /^patientid$/i.test(p) && required.has(p)),
    note: Object.keys(props).some((p) => /^noteid$/i.test(p) && required.has(p)),
  };
}

/** The best-matching offered tool for a request, by routing triggers and name words. */
function pickTool(text: string, tools: EmuTool[], triggers: Map<string, string[]>) {
  let best: { tool: EmuTool; score: number; trigger: string } | undefined;
  for (const tool of tools) {
    const phrases = (triggers.get(tool.function.name) ?? []).filter((p) => containsPhrase(text, p));
    if (phrases.length === 0) continue;
    const longest = phrases.reduce((a, b) => (b.length > a.length ? b : a));
    const nameHits = words(tool.function.name).filter((w) => containsPhrase(text, w)).length;
    const { missing } = fillArguments(tool.function.parameters, text, '');
    const score = phrases.reduce((sum, p) => sum + p.length, 0) + nameHits * 20 - missing.length * 5;
    if (!best || score > best.score) best = { tool, score, trigger: longest };
  }
  return best;
}

function userTexts(messages: EmuMessage[]): string[] {
  return messages.filter((m) => m.role === 'user').map((m) => m.content ?? '');
}

function lastAssistantText(messages: EmuMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role === 'assistant' && m.content) return m.content;
  }
  return '';
}

/** The request being worked on: this message, or (answering "which one?") the one before it. */
function currentRequest(messages: EmuMessage[], tools: EmuTool[], triggers: Map<string, string[]>) {
  const texts = userTexts(messages);
  const text = texts[texts.length - 1] ?? '';
  const asked = lastAssistantText(messages).includes(ASKED_WHICH);
  // "The one with MRN JS-200" answers the question even though "mrn" is also a lookup trigger.
  const answersWhich = asked && (DATE.test(text) || MRN.test(text)) && text.length < 120;
  const picked = answersWhich ? undefined : pickTool(text, tools, triggers);
  if (picked) return { text, picked, followUp: undefined as string | undefined };
  if (asked) {
    for (let i = texts.length - 2; i >= 0; i--) {
      const earlier = pickTool(texts[i], tools, triggers);
      if (earlier) return { text: texts[i], picked: earlier, followUp: text };
    }
  }
  return { text, picked: undefined, followUp: undefined };
}

/** Whom the request is about: a name in it, or after "her"/"his", the last name the user gave. */
function patientName(messages: EmuMessage[], text: string): string | undefined {
  const named = extractName(text) ?? extractLowercaseName(text);
  if (named) return named;
  if (!PRONOUN.test(text)) return undefined;
  const texts = userTexts(messages);
  for (let i = texts.length - 1; i >= 0; i--) {
    const earlier = extractName(texts[i]) ?? extractLowercaseName(texts[i]);
    if (earlier) return earlier;
  }
  return undefined;
}

function lookupCall(callSeq: () => string, args: Record<string, unknown>): Completion {
  return {
    content: null,
    tool_calls: [
      { id: callSeq(), type: 'function', function: { name: LOOKUP_FUNCTION, arguments: JSON.stringify(args) } },
    ],
  };
}

function toolCall(callSeq: () => string, tool: EmuTool, args: Record<string, unknown>): Completion {
  return {
    content: null,
    tool_calls: [
      { id: callSeq(), type: 'function', function: { name: tool.function.name, arguments: JSON.stringify(args) } },
    ],
  };
}

const describeMatch = (m: Match) =>
  `${m.name}${m.dateOfBirth ? `, born ${m.dateOfBirth}` : ''}${m.mrn ? ` (MRN ${m.mrn})` : ''}`;

/** After the lookup answered: go on with the request, or ask back when it is ambiguous. */
function afterLookup(
  messages: EmuMessage[],
  tools: EmuTool[],
  triggers: Map<string, string[]>,
  callSeq: () => string,
): Completion {
  const last = messages[messages.length - 1];
  let result: { matches?: Match[] } = {};
  try {
    result = JSON.parse(last.content ?? '{}') as { matches?: Match[] };
  } catch {
    result = {};
  }
  const matches = result.matches ?? [];
  const call = messages[messages.length - 2]?.tool_calls?.[0];
  let asked = '';
  try {
    asked = String((JSON.parse(call?.function.arguments ?? '{}') as { name?: string }).name ?? '');
  } catch {
    asked = '';
  }
  if (matches.length === 0) {
    return {
      content: `I could not find a patient named ${asked || 'like that'}. Check the spelling, or give me their MRN.`,
    };
  }
  if (matches.length > 1) {
    return {
      content: `I found ${matches.length} patients named ${asked}: ${matches.map(describeMatch).join('; ')}. ${ASKED_WHICH} You can answer with the date of birth or the MRN.`,
    };
  }
  const match = matches[0];
  const { text, picked } = currentRequest(messages, tools, triggers);
  if (!picked) return { content: `${describeMatch(match)}. What would you like to do for them?` };
  const need = needsPatient(picked.tool);
  const after = text.slice(text.toLowerCase().indexOf(picked.trigger) + picked.trigger.length);
  const { args } = fillArguments(picked.tool.function.parameters, text, after);
  const props = picked.tool.function.parameters?.properties ?? {};
  for (const key of Object.keys(props)) {
    if (/^patientid$/i.test(key)) args[key] = match.patientId;
    if (/^noteid$/i.test(key)) {
      if (!match.latestNoteId) {
        if (need.note)
          return { content: `${match.name} has no notes yet, so there is nothing to code. Write a note first.` };
      } else args[key] = match.latestNoteId;
    }
  }
  return toolCall(callSeq, picked.tool, args);
}

/**
 * Up to three distinct phrases to suggest: each offered tool's first one (the tools of one skill share their
 * phrases, so this is one a skill), then, with fewer skills than that, their other phrases.
 */
function exampleTriggers(triggers: Map<string, string[]>, tools: EmuTool[]): string[] {
  const lists = [...triggers.entries()]
    .filter(([fn]) => tools.some((t) => t.function.name === fn))
    .map(([, phrases]) => phrases);
  const examples = new Set<string>();
  for (const phrases of lists) if (phrases[0]) examples.add(phrases[0]);
  for (const phrases of lists) for (const p of phrases) examples.add(p);
  return [...examples].slice(0, 3);
}

/** One deterministic completion. */
export function complete(messages: EmuMessage[], tools: EmuTool[], callSeq: () => string): Completion {
  const last = messages[messages.length - 1];
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  const triggers = parseTriggers(system);
  const hasLookup = tools.some((t) => t.function.name === LOOKUP_FUNCTION);
  if (last?.role === 'tool') {
    const answered = messages[messages.length - 2]?.tool_calls?.[0]?.function.name;
    if (answered === LOOKUP_FUNCTION) return afterLookup(messages, tools, triggers, callSeq);
    return { content: answerFromToolResults(messages, tools) };
  }

  const skillTools = tools.filter((t) => t.function.name !== LOOKUP_FUNCTION);
  const { text, picked, followUp } = currentRequest(messages, skillTools, triggers);
  if (!picked) {
    // Asked for what a skill does that is installed without the access its tools need: say which access.
    for (const [name, { phrases, missing }] of parseWithoutAccess(system)) {
      if (phrases.some((p) => containsPhrase(text, p))) {
        return {
          content:
            `The ${name} skill is installed here, but it was not given the access its tools need (${missing}), ` +
            'so I can’t use it. An admin can grant that access with Change access in the Marketplace.',
        };
      }
    }
    // Asked for what a skill does that is not installed here: say so, instead of guessing.
    for (const [name, phrases] of parseUninstalled(system)) {
      if (phrases.some((p) => containsPhrase(text, p))) {
        return {
          content: `The ${name} skill is not installed in this workspace, so I can't do that yet. An admin can install it from the Marketplace.`,
        };
      }
    }
    const examples = exampleTriggers(triggers, skillTools);
    return {
      content: skillTools.length
        ? `I'm the offline model and could not tell which skill fits.${examples.length ? ` Try a request with ${examples.map((e) => `“${e}”`).join(', ')} in it.` : ''}`
        : "I'm the offline model. No skills are installed with granted tools yet, so I can only chat.",
    };
  }
  const after = text.slice(text.toLowerCase().indexOf(picked.trigger) + picked.trigger.length);
  const { args, missing } = fillArguments(picked.tool.function.parameters, text, after);
  const need = needsPatient(picked.tool);
  const unresolved = missing.filter((m) => !/^(patientid|noteid)$/i.test(m));
  const wantsPatient = missing.some((m) => /^(patientid|noteid)$/i.test(m)) && (need.patient || need.note);
  if (wantsPatient && hasLookup) {
    if (followUp) {
      // Answering "which one?": narrow the same name by the date of birth or MRN given.
      const name = patientName(messages, text);
      const date = DATE.exec(followUp)?.[0];
      if (date) return lookupCall(callSeq, { name, dateOfBirth: date });
      const mrn = MRN.exec(followUp)?.[0];
      if (mrn) return lookupCall(callSeq, { name: mrn });
      return { content: `${ASKED_WHICH} Give me their date of birth (YYYY-MM-DD) or MRN.` };
    }
    const name = patientName(messages, text);
    if (name) return lookupCall(callSeq, { name });
    return { content: 'Which patient is this about? Tell me their name.' };
  }
  if (unresolved.length || (wantsPatient && !hasLookup)) {
    return { content: `I need a little more to do that: ${[...missing].map((m) => m.replace(/Id$/, '')).join(', ')}.` };
  }
  return toolCall(callSeq, picked.tool, args);
}
