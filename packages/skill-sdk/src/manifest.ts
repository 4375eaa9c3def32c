// The skill manifest (Atrium contract §4) as types, plus the validation the marketplace applies.
import type { ErrorObject } from 'ajv';
import { createAjv } from './ajv.js';
import { schemaCostProblems } from './schema-cost.js';

export const SCOPES = [
  'mail:read',
  'mail:send',
  'drive:read',
  'drive:write',
  'patients:read',
  'patients:write',
  'billing:read',
  'billing:write',
] as const;
export type Scope = (typeof SCOPES)[number];

export const TIERS = ['free', 'standard', 'advanced', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
export const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?$/;

/** A JSON Schema object; tools take an object (what MCP and function calling expect). */
export type JsonSchema = Record<string, unknown>;

export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  requiredScopes: Scope[];
}

export interface ScopeDeclaration {
  scope: Scope;
  /** Shown to the admin in the install dialog. */
  reason: string;
}

export interface SkillManifest {
  slug: string;
  skillId: string;
  name: string;
  summary: string;
  description: string;
  category: string;
  version: string;
  publisher: string;
  minTier: Tier;
  visibility: 'public' | 'private';
  scopes: ScopeDeclaration[];
  tools: ToolDefinition[];
  /** Phrases that route a chat message to this skill's tools. */
  triggers?: string[];
}

export interface ManifestProblem {
  path: string;
  message: string;
}

export type ManifestCheck = { ok: true; manifest: SkillManifest } | { ok: false; errors: ManifestProblem[] };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function text(problems: ManifestProblem[], m: Record<string, unknown>, key: string, max: number, re?: RegExp) {
  const value = m[key];
  if (typeof value !== 'string' || value.trim() === '') problems.push({ path: key, message: 'Required text' });
  else if (value.length > max) problems.push({ path: key, message: `At most ${max} characters` });
  else if (re && !re.test(value)) problems.push({ path: key, message: `Must match ${re}` });
}

/**
 * Checks a manifest: required fields, scope vocabulary, tool names, JSON Schema inputs that compile,
 * and that every tool's requiredScopes are declared by the skill. Never throws.
 */
export function validateManifest(input: unknown): ManifestCheck {
  const problems: ManifestProblem[] = [];
  if (!isObject(input)) return { ok: false, errors: [{ path: '', message: 'The manifest must be an object' }] };
  const m = input;
  text(problems, m, 'slug', 64, SLUG);
  text(problems, m, 'skillId', 100);
  text(problems, m, 'name', 100);
  text(problems, m, 'summary', 300);
  text(problems, m, 'description', 5000);
  text(problems, m, 'category', 50);
  text(problems, m, 'version', 50, SEMVER);
  text(problems, m, 'publisher', 100);
  if (!TIERS.includes(m.minTier as Tier)) problems.push({ path: 'minTier', message: `One of ${TIERS.join(', ')}` });
  if (m.visibility !== 'public' && m.visibility !== 'private') {
    problems.push({ path: 'visibility', message: 'Either public or private' });
  }

  const declared = new Set<string>();
  if (!Array.isArray(m.scopes)) problems.push({ path: 'scopes', message: 'Required array' });
  else {
    m.scopes.forEach((s, i) => {
      if (!isObject(s) || !SCOPES.includes(s.scope as Scope)) {
        problems.push({ path: `scopes.${i}.scope`, message: `Unknown scope; one of ${SCOPES.join(' ')}` });
        return;
      }
      if (declared.has(s.scope as string)) problems.push({ path: `scopes.${i}.scope`, message: 'Declared twice' });
      if (typeof s.reason !== 'string' || s.reason.trim() === '' || s.reason.length > 300) {
        problems.push({ path: `scopes.${i}.reason`, message: 'Say why the skill needs this scope (1–300 characters)' });
      }
      declared.add(s.scope as string);
    });
  }

  if (!Array.isArray(m.tools) || m.tools.length === 0) problems.push({ path: 'tools', message: 'At least one tool' });
  else {
    const names = new Set<string>();
    const ajv = createAjv();
    m.tools.forEach((t, i) => {
      const at = `tools.${i}`;
      if (!isObject(t)) {
        problems.push({ path: at, message: 'Must be an object' });
        return;
      }
      if (typeof t.name !== 'string' || !TOOL_NAME.test(t.name)) {
        problems.push({ path: `${at}.name`, message: `Must match ${TOOL_NAME}` });
      } else if (names.has(t.name)) problems.push({ path: `${at}.name`, message: 'Duplicate tool name' });
      else names.add(t.name);
      if (typeof t.description !== 'string' || t.description.trim() === '' || t.description.length > 1000) {
        problems.push({ path: `${at}.description`, message: 'Required text (at most 1000 characters)' });
      }
      if (!isObject(t.inputSchema) || t.inputSchema.type !== 'object') {
        problems.push({ path: `${at}.inputSchema`, message: 'A JSON Schema with type "object"' });
      } else {
        try {
          ajv.compile(t.inputSchema);
          for (const problem of schemaCostProblems(t.inputSchema)) {
            problems.push({ path: `${at}.inputSchema`, message: `Tool ${String(t.name)}: ${problem}` });
          }
        } catch (err) {
          // Names the tool and, for a pattern the linear-time engine refuses, the pattern.
          const tool = typeof t.name === 'string' ? `Tool ${t.name}: ` : '';
          problems.push({
            path: `${at}.inputSchema`,
            message: `${tool}invalid JSON Schema: ${(err as Error).message}`,
          });
        }
      }
      if (!Array.isArray(t.requiredScopes)) problems.push({ path: `${at}.requiredScopes`, message: 'Required array' });
      else {
        t.requiredScopes.forEach((s, j) => {
          if (!declared.has(s as string)) {
            problems.push({
              path: `${at}.requiredScopes.${j}`,
              message: `Scope ${String(s)} is not declared by the skill`,
            });
          }
        });
      }
    });
  }
  if (m.triggers !== undefined) {
    const ok =
      Array.isArray(m.triggers) && m.triggers.every((x) => typeof x === 'string' && x.length > 0 && x.length <= 100);
    if (!ok || (m.triggers as unknown[]).length > 50) {
      problems.push({ path: 'triggers', message: 'Up to 50 phrases of 1–100 characters' });
    }
  }
  return problems.length ? { ok: false, errors: problems } : { ok: true, manifest: m as unknown as SkillManifest };
}

/** The tools as an MCP `tools/list` answer would carry them. */
export function toMcpTools(manifest: SkillManifest) {
  return manifest.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
}

/** The tools as OpenAI-compatible function-calling `tools`. */
export function toFunctionTools(manifest: SkillManifest, nameOf: (tool: ToolDefinition) => string = (t) => t.name) {
  return manifest.tools.map((t) => ({
    type: 'function' as const,
    function: { name: nameOf(t), description: t.description, parameters: t.inputSchema },
  }));
}

/** Validates a tool input against its inputSchema; errors use dotted `input.` paths. */
export function checkToolInput(
  tool: Pick<ToolDefinition, 'inputSchema'>,
  input: unknown,
  ajv = createAjv(),
): { ok: true } | { ok: false; errors: ManifestProblem[] } {
  const validate = ajv.compile(tool.inputSchema);
  if (validate(input)) return { ok: true };
  return { ok: false, errors: (validate.errors ?? []).map(toProblem) };
}

export function toProblem(e: ErrorObject): ManifestProblem {
  const path = ['input', ...e.instancePath.split('/').filter(Boolean)];
  if (e.keyword === 'required') path.push(String((e.params as { missingProperty: string }).missingProperty));
  if (e.keyword === 'additionalProperties') {
    path.push(String((e.params as { additionalProperty: string }).additionalProperty));
  }
  return { path: path.join('.'), message: e.message ?? 'Invalid value' };
}

/** Semantic-version comparison (pre-release suffixes sort before the release). */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const [core, pre] = v.split('-', 2);
    return { nums: core.split('.').map(Number), pre };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) {
    if ((x.nums[i] ?? 0) !== (y.nums[i] ?? 0)) return (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
  }
  if (x.pre === y.pre) return 0;
  if (x.pre === undefined) return 1;
  if (y.pre === undefined) return -1;
  return x.pre < y.pre ? -1 : 1;
}
