// Compiled inputSchema validators, cached per skill version and tool (a bounded LRU). A version's
// manifest never changes (updates need a higher version), so one compile serves every invoke of it;
// compiling per invoke grew the heap without bound. Each entry compiles on its own Ajv instance so
// one skill's `$id`s and `$ref`s can never resolve against another workspace's schema.
import type { Ajv, ValidateFunction } from 'ajv';
import { createAjv } from '../../../packages/skill-sdk/src/ajv.js';
import { schemaCostProblems } from '../../../packages/skill-sdk/src/schema-cost.js';
import { AppError } from '../../platform/errors.js';

/** JSON with object keys sorted: jsonb reorders keys, so a stored manifest and the code's differ in order only. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

export interface ValidatorKey {
  skillId: string;
  version: string;
  tool: string;
}

interface Entry {
  /** The schema as compiled (canonical JSON): a hit whose schema differs (it never should) recompiles. */
  source: string;
  /** Plain JSON.stringify forms seen for it (key orders differ by origin): the fast path. */
  seen: string[];
  validate?: ValidateFunction;
  failure?: AppError;
}

export interface ValidatorCacheStats {
  size: number;
  hits: number;
  misses: number;
  evictions: number;
}

export class ValidatorCache {
  private readonly entries = new Map<string, Entry>();
  // Checks schemas against the meta-schema once, so entry instances skip compiling the meta-schema.
  private readonly meta: Ajv = createAjv();
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  constructor(readonly maxEntries = 500) {}

  /** The compiled validator for a tool of a skill version; throws AppError when the schema cannot compile. */
  get(key: ValidatorKey, schema: Record<string, unknown>): ValidateFunction {
    const id = `${key.skillId}\u0000${key.version}\u0000${key.tool}`;
    const raw = JSON.stringify(schema);
    let entry = this.entries.get(id);
    const same = (e: Entry) => {
      if (e.seen.includes(raw)) return true;
      if (e.source !== canonicalJson(schema)) return false;
      if (e.seen.length < 4) e.seen.push(raw);
      return true;
    };
    if (entry && same(entry)) {
      this.hits++;
      this.entries.delete(id);
      this.entries.set(id, entry);
    } else {
      this.misses++;
      entry = this.compile(key, schema, canonicalJson(schema));
      entry.seen.push(raw);
      this.entries.delete(id);
      this.entries.set(id, entry);
      while (this.entries.size > this.maxEntries) {
        this.entries.delete(this.entries.keys().next().value as string);
        this.evictions++;
      }
    }
    if (entry.failure) throw entry.failure;
    return entry.validate!;
  }

  stats(): ValidatorCacheStats {
    return { size: this.entries.size, hits: this.hits, misses: this.misses, evictions: this.evictions };
  }

  clear(): void {
    this.entries.clear();
  }

  private compile(key: ValidatorKey, schema: Record<string, unknown>, source: string): Entry {
    const unusable = (detail: string) =>
      new AppError('schema_unsupported', 422, `The ${key.tool} tool's inputSchema cannot be used: ${detail}`, {
        skillId: key.skillId,
        version: key.version,
        tool: key.tool,
      });
    try {
      if (!this.meta.validateSchema(schema)) {
        return { source, seen: [], failure: unusable(this.meta.errorsText(this.meta.errors)) };
      }
      const costly = schemaCostProblems(schema);
      if (costly.length) return { source, seen: [], failure: unusable(costly.join('; ')) };
      return { source, seen: [], validate: createAjv({ validateSchema: false }).compile(schema) };
    } catch (err) {
      // E.g. a manifest stored before patterns ran on RE2, holding lookaround or backreferences.
      return { source, seen: [], failure: unusable((err as Error).message) };
    }
  }
}

/** The process-wide cache the dispatcher uses. */
export const toolValidators = new ValidatorCache();
