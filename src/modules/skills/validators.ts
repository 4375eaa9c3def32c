// Compiled inputSchema validators, cached per skill version and tool (a bounded LRU). A version's
// manifest never changes (updates need a higher version), so one compile serves every invoke of it;
// compiling per invoke grew the heap without bound. Each entry compiles on its own Ajv instance so
// one skill's `$id`s and `$ref`s can never resolve against another workspace's schema.
import type { Ajv, ValidateFunction } from 'ajv';
import { createAjv } from '../../../packages/skill-sdk/src/ajv.js';
import { AppError } from '../../platform/errors.js';

export interface ValidatorKey {
  skillId: string;
  version: string;
  tool: string;
}

interface Entry {
  /** The schema as compiled: a hit whose schema differs (it never should) recompiles. */
  source: string;
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
    const source = JSON.stringify(schema);
    let entry = this.entries.get(id);
    if (entry && entry.source === source) {
      this.hits++;
      this.entries.delete(id);
      this.entries.set(id, entry);
    } else {
      this.misses++;
      entry = this.compile(key, schema, source);
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
        return { source, failure: unusable(this.meta.errorsText(this.meta.errors)) };
      }
      return { source, validate: createAjv({ validateSchema: false }).compile(schema) };
    } catch (err) {
      // E.g. a manifest stored before patterns ran on RE2, holding lookaround or backreferences.
      return { source, failure: unusable((err as Error).message) };
    }
  }
}

/** The process-wide cache the dispatcher uses. */
export const toolValidators = new ValidatorCache();
