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
  const out = new Map<string, string[]>();
  const at = system.indexOf('Routing triggers');
  if (at < 0) return out;
  for (const line of system.slice(at).split('\n').slice(1)) {
    const m = /^([A-Za-z0-9_-]{1,64}):\s*(.*)$/.exec(line.trim());
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

function lastUserText(messages: EmuMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === 'user') return messages[i].content ?? '';
  return '';
}

function answerFromToolResults(messages: EmuMessage[], tools: EmuTool[]): string {
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
    if (error) return `I could not use ${name}: ${error.detail ?? error.code}.`;
    if (typeof obj?.summary === 'string') return obj.summary;
    const text = JSON.stringify(parsed);
    return `${name} returned ${text.length > 300 ? `${text.slice(0, 297)}…` : text}`;
  });
  void tools;
  return lines.join('\n') || 'The tools returned nothing.';
}

/** One deterministic completion. */
export function complete(messages: EmuMessage[], tools: EmuTool[], callSeq: () => string): Completion {
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') return { content: answerFromToolResults(messages, tools) };

  const text = lastUserText(messages);
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  const triggers = parseTriggers(system);
  const offered = new Set(tools.map((t) => t.function.name));

  // Score each offered tool: trigger phrases found (longer phrases count more), plus its own name words.
  let best: { tool: EmuTool; score: number; trigger: string } | undefined;
  for (const tool of tools) {
    const phrases = (triggers.get(tool.function.name) ?? []).filter((p) => containsPhrase(text, p));
    if (phrases.length === 0) continue;
    const longest = phrases.reduce((a, b) => (b.length > a.length ? b : a));
    const nameHits = words(tool.function.name).filter((w) => containsPhrase(text, w)).length;
    const { missing } = fillArguments(tool.function.parameters, text, '');
    const score = phrases.reduce((s, p) => s + p.length, 0) + nameHits * 20 - missing.length * 5;
    if (!best || score > best.score) best = { tool, score, trigger: longest };
  }
  if (!best || !offered.has(best.tool.function.name)) {
    const names = tools.map((t) => t.function.name);
    return {
      content: names.length
        ? `I'm the offline model and could not match your request to a skill. I can use: ${names.join(', ')}.`
        : "I'm the offline model. No skills are installed with granted tools yet, so I can only chat.",
    };
  }
  const after = text.slice(text.toLowerCase().indexOf(best.trigger) + best.trigger.length);
  const { args, missing } = fillArguments(best.tool.function.parameters, text, after);
  if (missing.length) {
    return { content: `To use ${best.tool.function.name} I need: ${missing.join(', ')}.` };
  }
  return {
    content: null,
    tool_calls: [
      { id: callSeq(), type: 'function', function: { name: best.tool.function.name, arguments: JSON.stringify(args) } },
    ],
  };
}
