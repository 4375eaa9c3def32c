// POST /chat: offers the model only the tools of installed skills whose scopes are granted, and
// runs every tool call through the dispatcher (same checks and audit as POST /skills/invoke).
import type { RequestContext } from '../../../platform/context.js';
import { AppError } from '../../../platform/errors.js';
import type { AppDeps } from '../../../platform/types.js';
import { auditUnknownTool, availableTools, invokeTool, outcomeOf, uninstalledSkills } from '../dispatcher.js';
import { type ChatMessage, completeWithFallback, type FunctionTool, resolveModelProviders } from './model-provider.js';
import { LOOKUP_FUNCTION, lookupPatients, lookupTool } from './patient-lookup.js';

export const MAX_TOOL_ROUNDS = 4;

export interface ChatToolCall {
  slug: string;
  tool: string;
  input: unknown;
  outcome: 'ok' | 'denied' | 'error';
  result?: unknown;
  error?: { code: string; detail: string };
  /** What the call did, in plain words, for the card the web app shows (no ids, no tool names). */
  label: string;
  summary: string;
}

/** "check_eligibility" → "Check eligibility". */
export function toolLabel(tool: string): string {
  const words = tool.replace(/[_-]+/g, ' ').trim();
  return words ? words[0].toUpperCase() + words.slice(1) : 'Tool';
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const INTERNAL_ID = /\b[a-z]{2,5}_[0-9a-z]{20,40}\b/g;

/**
 * The assistant's words never show internal ids or tool names (contract §4), whatever the model
 * wrote: known patient ids become their names, other ids go, function names become plain labels.
 */
export function sanitizeAnswer(
  content: string,
  names: Map<string, { slug: string; tool: string }>,
  people: Map<string, string>,
): string {
  let text = content;
  for (const [fn, target] of names) {
    text = text.split(fn).join(toolLabel(target.tool).toLowerCase());
    text = text.split(`${target.slug} › ${target.tool}`).join(toolLabel(target.tool).toLowerCase());
  }
  text = text.split(LOOKUP_FUNCTION).join('patient lookup');
  // Bare tool names ("I called check_eligibility"): only names no one writes as a word (with _ or -).
  const bare = new Set([...[...names.values()].map((t) => t.tool), 'lookup_patient']);
  for (const tool of bare) {
    if (!/[_-]/.test(tool)) continue;
    const label = tool === 'lookup_patient' ? 'patient lookup' : toolLabel(tool).toLowerCase();
    text = text.replace(new RegExp(`(?<![A-Za-z0-9_-])${escapeRegExp(tool)}(?![A-Za-z0-9_-])`, 'g'), label);
  }
  text = text.replace(INTERNAL_ID, (id) => people.get(id) ?? '');
  return text
    .replace(/\(\s*\)/g, '')
    .replace(/[ \t]{2,}/g, ' ')
    .replace(/ ([.,;:])/g, '$1')
    .trim();
}

function summaryOf(result: unknown, fallback: string): string {
  const obj = result && typeof result === 'object' ? (result as Record<string, unknown>) : undefined;
  return typeof obj?.summary === 'string' ? obj.summary : fallback;
}

type Skills = Awaited<ReturnType<typeof availableTools>>;

/** Function names must match ^[a-zA-Z0-9_-]{1,64}$ and be unique across skills. */
function functionNames(skills: Skills): Map<string, { slug: string; tool: string }> {
  const names = new Map<string, { slug: string; tool: string }>();
  let n = 0;
  for (const skill of skills) {
    for (const tool of skill.tools) {
      let name = `${skill.slug}__${tool.name}`;
      if (name.length > 64 || names.has(name)) name = `t${n}__${tool.name}`.slice(0, 64);
      names.set(name, { slug: skill.slug, tool: tool.name });
      n++;
    }
  }
  return names;
}

export function systemPrompt(
  skills: Skills,
  names: Map<string, { slug: string; tool: string }>,
  uninstalled: { name: string; triggers: string[] }[] = [],
): string {
  const lines = [
    'You are the Atrium assistant for a care team. Use a tool when it helps and answer from its result.',
    'Never invent patient data. If a tool is refused, say so.',
    '',
  ];
  for (const skill of skills) {
    lines.push(`## Skill ${skill.slug} (v${skill.version})`, skill.content.trim(), '');
  }
  lines.push('Routing triggers (tool: phrases):');
  for (const [fn, target] of names) {
    const skill = skills.find((s) => s.slug === target.slug);
    lines.push(`${fn}: ${(skill?.triggers ?? []).join(' | ')}`);
  }
  if (uninstalled.length) {
    lines.push(
      '',
      'Not installed here (skill: phrases). When asked for what one of these does, say that skill is not installed ' +
        'in this workspace and that an admin can install it from the Marketplace; do not suggest it as an example.',
    );
    for (const skill of uninstalled) lines.push(`${skill.name.replace(/[:\n]/g, ' ')}: ${skill.triggers.join(' | ')}`);
  }
  // Installed, but none of its tools usable: the access they need was not granted. Asked for what it does, the
  // assistant says which access is missing (an admin changes it in the Marketplace) instead of guessing.
  const withoutAccess = skills.filter((s) => s.tools.length === 0 && s.missingScopes.length > 0 && s.triggers.length);
  if (withoutAccess.length) {
    lines.push(
      '',
      'Installed without the access its tools need (skill: phrases || missing access). When asked for what one of ' +
        'these does, say the skill is installed but was not given that access, and that an admin can grant it with ' +
        'Change access in the Marketplace; do not guess another skill.',
    );
    for (const skill of withoutAccess) {
      lines.push(
        `${skill.name.replace(/[:\n]/g, ' ')}: ${skill.triggers.join(' | ')} || ${skill.missingScopes.join(', ')}`,
      );
    }
  }
  return lines.join('\n');
}

export interface ChatHooks {
  /** Called as each tool call finishes (for a stream of cards while the assistant works). */
  onToolCall?: (call: ChatToolCall) => void;
}

export async function runChat(
  deps: AppDeps,
  ctx: RequestContext,
  messages: { role: 'user' | 'assistant'; content: string }[],
  hooks: ChatHooks = {},
) {
  const chain = resolveModelProviders(deps);
  const [skills, uninstalled] = await Promise.all([availableTools(deps, ctx), uninstalledSkills(deps, ctx)]);
  const names = functionNames(skills);
  const tools: FunctionTool[] = [];
  for (const [fn, target] of names) {
    const def = skills.find((s) => s.slug === target.slug)!.tools.find((t) => t.name === target.tool)!;
    tools.push({ type: 'function', function: { name: fn, description: def.description, parameters: def.inputSchema } });
  }
  // The built-in patient lookup comes with any patients:read grant (contract §4).
  const offerLookup = skills.some((skill) => skill.grantedScopes.includes('patients:read'));
  if (offerLookup) tools.unshift(lookupTool);
  const people = new Map<string, string>();
  const convo: ChatMessage[] = [{ role: 'system', content: systemPrompt(skills, names, uninstalled) }, ...messages];
  const toolCalls: ChatToolCall[] = [];
  const record = (call: ChatToolCall) => {
    toolCalls.push(call);
    hooks.onToolCall?.(call);
  };
  const failures: { provider: string; error: string }[] = [];

  for (let round = 0; round <= MAX_TOOL_ROUNDS; round++) {
    // After the last allowed round, ask for an answer without tools.
    const offered = round < MAX_TOOL_ROUNDS ? tools : [];
    const {
      message,
      provider,
      failures: failed,
    } = await completeWithFallback(chain, { messages: convo, tools: offered }, { requestId: ctx.requestId });
    failures.push(...failed);
    const calls = offered.length ? (message.tool_calls ?? []) : [];
    if (calls.length === 0) {
      return {
        message: { role: 'assistant' as const, content: sanitizeAnswer(message.content ?? '', names, people) },
        toolCalls,
        model: { provider: provider.name, name: provider.model, offline: provider.offline },
        provider: provider.name,
        ...(failures.length ? { fallbacks: failures } : {}),
      };
    }
    convo.push({ role: 'assistant', content: message.content ?? null, tool_calls: calls });
    for (const call of calls) {
      const target = names.get(call.function.name);
      let input: unknown = {};
      try {
        input = JSON.parse(call.function.arguments || '{}');
      } catch {
        input = call.function.arguments;
      }
      let content: string;
      if (offerLookup && call.function.name === LOOKUP_FUNCTION) {
        const result = await lookupPatients(deps, ctx, input);
        for (const m of result.matches) people.set(m.patientId, m.name);
        record({
          slug: 'assistant',
          tool: 'lookup_patient',
          input,
          outcome: 'ok',
          result,
          label: 'Patient lookup',
          summary: result.summary,
        });
        content = JSON.stringify(result);
      } else if (!target) {
        await auditUnknownTool(deps, ctx, call.function.name);
        content = JSON.stringify({ error: { code: 'unknown_tool', detail: `No tool ${call.function.name}` } });
      } else {
        try {
          const { result } = await invokeTool(deps, ctx, { slug: target.slug, tool: target.tool, input }, 'chat');
          record({
            slug: target.slug,
            tool: target.tool,
            input,
            outcome: 'ok',
            result,
            label: toolLabel(target.tool),
            summary: sanitizeAnswer(summaryOf(result, 'Done.'), names, people),
          });
          content = JSON.stringify(result);
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          const error = { code: err.code, detail: err.message };
          record({
            slug: target.slug,
            tool: target.tool,
            input,
            outcome: outcomeOf(err),
            error,
            label: toolLabel(target.tool),
            summary:
              outcomeOf(err) === 'denied' ? 'Not allowed with the permissions granted to this skill.' : err.message,
          });
          content = JSON.stringify({ error });
        }
      }
      convo.push({ role: 'tool', tool_call_id: call.id, content });
    }
  }
  throw new AppError('upstream_failed', 502, 'The model did not finish');
}
