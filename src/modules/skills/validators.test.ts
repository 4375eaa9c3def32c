import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import {
  createAjv,
  LINEAR_REGEXP_ENGINE,
  type linearRegExp,
  linearRegExpEngine,
  NATIVE_FORMATS,
  UnsupportedPatternError,
} from '../../../packages/skill-sdk/src/ajv.js';
import { validateManifest } from '../../../packages/skill-sdk/src/manifest.js';
import { schemaCostProblems } from '../../../packages/skill-sdk/src/schema-cost.js';
import { AppError } from '../../platform/errors.js';
import { ValidatorCache } from './validators.js';

const EVIL = '^(a+)+$';
// 13.7 s on V8's backtracking engine (issue 9); microseconds on RE2.
const evilInput = `${'a'.repeat(30)}!`;
const evilSchema = () => ({ type: 'object', properties: { code: { type: 'string', pattern: EVIL } } });

const baseManifest = {
  slug: 'lookup',
  skillId: 'x',
  name: 'Lookup',
  summary: 's',
  description: 'd',
  category: 'c',
  version: '1.0.0',
  publisher: 'p',
  minTier: 'enterprise',
  visibility: 'private',
  scopes: [],
};

const timed = <T>(fn: () => T): { value: T; ms: number } => {
  const started = performance.now();
  const value = fn();
  return { value, ms: performance.now() - started };
};

describe('linear-time schema validation', () => {
  it('compiles every pattern keyword on re2js', () => {
    const ajv = createAjv();
    expect(ajv.opts.code.regExp).toBe(linearRegExpEngine);
    const re = linearRegExpEngine(EVIL, 'u') as ReturnType<typeof linearRegExp>;
    expect(re.engine).toBe(LINEAR_REGEXP_ENGINE);
    expect(String(re)).toBe(`/${EVIL}/u`);
    // RE2 cannot backtrack, so it refuses what needs backtracking: proof the engine is not V8's.
    expect(() => ajv.compile({ type: 'string', pattern: '(a)\\1' })).toThrow(UnsupportedPatternError);
    expect(() => ajv.compile({ type: 'string', pattern: '^(?=a)' })).toThrow(/not supported/);
  });

  it('rejects the catastrophic input for pattern and patternProperties at once', () => {
    const validate = createAjv().compile({
      type: 'object',
      properties: { code: { type: 'string', pattern: EVIL } },
      patternProperties: { '^(b+)+$': { type: 'number' } },
    });
    const { value, ms } = timed(() => validate({ code: evilInput, [`${'b'.repeat(30)}!`]: 'x', bbb: 'not a number' }));
    expect(value).toBe(false);
    expect(validate.errors?.map((e) => e.keyword).sort()).toEqual(['pattern', 'type']);
    expect(ms).toBeLessThan(1000);
    expect(validate({ code: 'aaaa', bbb: 3 })).toBe(true);
    // Linear in a 1 MiB input too.
    expect(timed(() => validate({ code: `${'a'.repeat(1 << 20)}!` })).ms).toBeLessThan(2000);
  });

  it('runs the regex formats on re2js too (url was quadratic on V8)', () => {
    const ajv = createAjv();
    for (const [name, def] of Object.entries(ajv.formats)) {
      if (!(NATIVE_FORMATS as readonly string[]).includes(name)) expect(def, name).not.toBeInstanceOf(RegExp);
    }
    const validate = ajv.compile({
      type: 'object',
      properties: { u: { format: 'url' }, h: { format: 'hostname' }, e: { format: 'email' } },
    });
    expect(validate({ u: 'https://exämple.com:8080/a?b#c', h: 'a.example', e: 'a@b.co' })).toBe(true);
    expect(validate({ h: 'a'.repeat(254) })).toBe(false);
    expect(validate({ h: '-a' })).toBe(false);
    expect(validate({ e: 'a@b' })).toBe(false);
    // 40,000 colons took 2.7 s with ajv-formats' own expression.
    const { value, ms } = timed(() => validate({ u: `http://${':'.repeat(200_000)} ` }));
    expect(value).toBe(false);
    expect(ms).toBeLessThan(1000);
  });

  it('refuses at upload a pattern the engine cannot run, naming the tool and the pattern', () => {
    const check = validateManifest({
      ...baseManifest,
      tools: [
        {
          name: 'find',
          description: 'd',
          inputSchema: { type: 'object', properties: { q: { type: 'string', pattern: '(a)\\1' } } },
          requiredScopes: [],
        },
      ],
    });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.errors).toEqual([
      {
        path: 'tools.0.inputSchema',
        message: expect.stringContaining('Tool find: invalid JSON Schema: pattern "(a)\\\\1"'),
      },
    ]);
  });
});

describe('schemas whose validation would not be linear in the input', () => {
  // 22 levels of a definition referenced twice took 250 ms on a 2-item input (doubling per level).
  const shared = (levels: number) => {
    const defs: Record<string, unknown> = { d0: { type: 'array', items: { type: 'string' } } };
    for (let k = 1; k <= levels; k++) {
      defs[`d${k}`] = {
        anyOf: [{ allOf: [{ $ref: `#/$defs/d${k - 1}` }, { maxItems: 0 }] }, { $ref: `#/$defs/d${k - 1}` }],
      };
    }
    return { type: 'object', $defs: defs, properties: { x: { $ref: `#/$defs/d${levels}` } } };
  };

  it('refuses exponential $ref sharing, recursion and remote references', () => {
    expect(schemaCostProblems(shared(3))).toEqual([]);
    expect(schemaCostProblems(shared(22))).toEqual([expect.stringContaining('too large once its $refs are expanded')]);
    expect(schemaCostProblems({ type: 'object', properties: { child: { $ref: '#' } } })).toEqual([
      '$ref "#" is recursive',
    ]);
    expect(
      schemaCostProblems({ $defs: { n: { properties: { c: { $ref: '#/$defs/n' } } } }, $ref: '#/$defs/n' }),
    ).toEqual(['$ref "#/$defs/n" is recursive']);
    expect(schemaCostProblems({ properties: { a: { $ref: 'https://example.com/s.json' } } })[0]).toContain(
      'only local references',
    );
  });

  it('refuses pairwise uniqueItems on unbounded arrays of objects', () => {
    // 20,000 objects (229 KB of JSON) took 27 s.
    expect(schemaCostProblems({ type: 'array', uniqueItems: true })[0]).toContain('uniqueItems');
    expect(schemaCostProblems({ type: 'array', uniqueItems: true, items: { type: 'object' } })).toHaveLength(1);
    expect(schemaCostProblems({ type: 'array', uniqueItems: true, items: { type: 'string' } })).toEqual([]);
    expect(schemaCostProblems({ type: 'array', uniqueItems: true, maxItems: 100 })).toEqual([]);
  });

  it('is applied at upload and to stored schemas', () => {
    const check = validateManifest({
      ...baseManifest,
      tools: [{ name: 'tree', description: 'd', inputSchema: shared(22), requiredScopes: [] }],
    });
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.errors[0].message).toMatch(/^Tool tree: the schema is too large/);
    const cache = new ValidatorCache();
    expect(() =>
      cache.get({ skillId: 'skl_old', version: '1.0.0', tool: 'tags' }, { type: 'array', uniqueItems: true }),
    ).toThrow(/uniqueItems/);
  });
});

describe('ValidatorCache', () => {
  const key = { skillId: 'skl_a', version: '1.0.0', tool: 'lookup' };

  it('reuses one compiled validator per skill version and tool', () => {
    const cache = new ValidatorCache();
    // The dispatcher reads a fresh copy of the manifest on every invoke.
    const first = cache.get(key, evilSchema());
    const second = cache.get(key, evilSchema());
    expect(second).toBe(first);
    expect(cache.stats()).toMatchObject({ size: 1, hits: 1, misses: 1 });
    expect(timed(() => first({ code: evilInput })).value).toBe(false);

    const next = cache.get({ ...key, version: '1.1.0' }, evilSchema());
    expect(next).not.toBe(first);
    expect(cache.get({ ...key, tool: 'other' }, evilSchema())).not.toBe(first);
    expect(cache.stats()).toMatchObject({ size: 3, hits: 1, misses: 3 });
  });

  it('treats a schema whose keys the database reordered as the same schema', () => {
    const cache = new ValidatorCache();
    // A built-in's pinned manifest comes back from jsonb in another key order than the code's.
    const fromCode = { type: 'object', properties: { code: { type: 'string', pattern: EVIL } }, required: ['code'] };
    const fromJsonb = { required: ['code'], properties: { code: { pattern: EVIL, type: 'string' } }, type: 'object' };
    expect(cache.get(key, fromJsonb)).toBe(cache.get(key, fromCode));
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 1 });
    // Different content under the same key (never expected) recompiles rather than reusing.
    const other = cache.get(key, { ...fromCode, required: [] });
    expect(other({})).toBe(true);
  });

  it('stays bounded, evicting the least recently used', () => {
    const cache = new ValidatorCache(2);
    const a = cache.get({ ...key, version: '1.0.0' }, evilSchema());
    cache.get({ ...key, version: '2.0.0' }, evilSchema());
    cache.get({ ...key, version: '1.0.0' }, evilSchema()); // 1.0.0 is now the most recent
    cache.get({ ...key, version: '3.0.0' }, evilSchema()); // evicts 2.0.0
    expect(cache.stats()).toMatchObject({ size: 2, evictions: 1 });
    expect(cache.get({ ...key, version: '1.0.0' }, evilSchema())).toBe(a);
    for (let i = 0; i < 100; i++) cache.get({ ...key, version: `9.0.${i}` }, evilSchema());
    expect(cache.stats().size).toBe(2);
  });

  it("keeps one skill's $id from clashing with another's", () => {
    const cache = new ValidatorCache();
    const schema = (type: string) => ({
      $id: 'https://example.com/input',
      type: 'object',
      properties: { x: { type } },
    });
    const a = cache.get({ ...key, skillId: 'skl_a' }, schema('string'));
    const b = cache.get({ ...key, skillId: 'skl_b' }, schema('number'));
    expect([a({ x: 'text' }), b({ x: 1 }), b({ x: 'text' })]).toEqual([true, true, false]);
  });

  it('answers schema_unsupported for a stored schema the engine refuses, and remembers it', () => {
    const cache = new ValidatorCache();
    const legacy = { type: 'object', properties: { q: { type: 'string', pattern: '^(?!x)' } } };
    const err = (() => {
      try {
        cache.get(key, legacy);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'schema_unsupported', status: 422 });
    expect((err as Error).message).toContain('lookup');
    expect(() => cache.get(key, legacy)).toThrow(AppError);
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 1 });
  });
});
