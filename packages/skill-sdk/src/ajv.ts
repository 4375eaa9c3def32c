// Every JSON Schema the platform validates tool inputs with runs its regular expressions (`pattern`,
// `patternProperties`, `propertyNames.pattern` and the regex-based `format`s) on RE2 (re2js, pure
// JavaScript): matching is linear in the input, so a `pattern` such as `^(a+)+$` cannot stall the
// process. RE2 has no lookaround and no backreferences: schemas using them fail to compile, which
// the marketplace reports at upload.
import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { RE2JS } from 're2js';

// ajv-formats is CommonJS: under NodeNext its default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv,
) => Ajv;

/** The name every compiled linear regular expression reports as its engine. */
export const LINEAR_REGEXP_ENGINE = 're2js';

/** A regular expression compiled by the linear engine: what Ajv calls for `pattern` keywords. */
export interface LinearRegExp {
  test(s: string): boolean;
  toString(): string;
  readonly engine: typeof LINEAR_REGEXP_ENGINE;
  readonly source: string;
  readonly flags: string;
}

export class UnsupportedPatternError extends Error {
  constructor(
    readonly pattern: string,
    reason: string,
  ) {
    super(
      `pattern ${JSON.stringify(pattern)} is not supported: ${reason} (patterns run on a linear-time engine, RE2: no lookaround, no backreferences, repeat counts up to 1000)`,
    );
    this.name = 'UnsupportedPatternError';
  }
}

function re2Flags(flags: string): number {
  let out = 0;
  if (flags.includes('i')) out |= RE2JS.CASE_INSENSITIVE;
  if (flags.includes('m')) out |= RE2JS.MULTILINE;
  if (flags.includes('s')) out |= RE2JS.DOTALL;
  return out;
}

/** Compiles an ECMAScript pattern on RE2; throws UnsupportedPatternError for what RE2 cannot run. */
export function linearRegExp(pattern: string, flags = ''): LinearRegExp {
  let re: RE2JS;
  try {
    re = RE2JS.compile(RE2JS.translateRegExp(pattern), re2Flags(flags));
  } catch (err) {
    throw new UnsupportedPatternError(pattern, (err as Error).message);
  }
  // Ajv de-duplicates patterns by `toString()`, so it must name the pattern and flags.
  const text = `/${pattern}/${flags}`;
  return {
    engine: LINEAR_REGEXP_ENGINE,
    source: pattern,
    flags,
    test: (s: string) => re.test(s),
    toString: () => text,
  };
}

/** Ajv's `code.regExp` option: the engine behind every `pattern` keyword. */
export const linearRegExpEngine: NonNullable<NonNullable<Options['code']>['regExp']> = Object.assign(
  (pattern: string, u: string) => linearRegExp(pattern, u),
  {
    code: 'require("@atrium/skill-sdk").linearRegExpEngine',
  },
);

/**
 * Formats that keep ajv-formats' own code: fixed, platform-chosen expressions that RE2 cannot
 * compile (`duration` uses lookahead) or plain functions (dates, `uri`, `byte`, `regex`, numbers).
 * None is tenant-authored, and each runs in time linear in its input (bench: 20,000-character
 * adversarial strings in under 10 ms).
 */
export const NATIVE_FORMATS = ['duration'] as const;

// A negative lookahead group with at most one level of nested groups, e.g. `(?!(?:10|127)(?:\.\d{1,3}){3})`.
const NEGATIVE_LOOKAHEAD = /\(\?!(?:[^()]|\([^()]*\))*\)/g;
const HOSTNAME_LENGTH = '(?=.{1,253}\\.?$)';

/**
 * The RegExp-based formats of ajv-formats as the same expressions on RE2, compiled once per
 * process and shared by every Ajv instance. `url` is quadratic on V8 (40,000 colons took 2.7 s)
 * and uses negative lookaheads only to reject private IPv4 hosts: on RE2 it runs without them, so
 * `format: "url"` accepts private addresses (outbound calls have their own address policy).
 */
function buildLinearFormats(formats: Ajv['formats']): Map<string, (s: string) => boolean> {
  const out = new Map<string, (s: string) => boolean>();
  for (const [name, def] of Object.entries(formats)) {
    if (!(def instanceof RegExp) || (NATIVE_FORMATS as readonly string[]).includes(name)) continue;
    if (name === 'hostname') {
      // The lookahead `(?=.{1,253}\.?$)` is a length limit: checked in code instead.
      const re = linearRegExp(def.source.replace(HOSTNAME_LENGTH, ''), def.flags);
      out.set(name, (s) => {
        const n = s.endsWith('.') ? s.length - 1 : s.length;
        return n >= 1 && n <= 253 && re.test(s);
      });
      continue;
    }
    const re = linearRegExp(name === 'url' ? def.source.replace(NEGATIVE_LOOKAHEAD, '') : def.source, def.flags);
    out.set(name, (s) => re.test(s));
  }
  return out;
}
let linearFormats: Map<string, (s: string) => boolean> | undefined;

/**
 * An Ajv instance configured as the dispatcher configures it (all errors, formats, no type
 * coercion, linear-time regular expressions). `extra` is for the platform's own tuning
 * (`validateSchema: false` when the schema was checked at upload).
 */
export function createAjv(extra: Pick<Options, 'validateSchema'> = {}): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: false,
    coerceTypes: false,
    useDefaults: false,
    code: { regExp: linearRegExpEngine },
    ...extra,
  });
  addFormats(ajv);
  linearFormats ??= buildLinearFormats(ajv.formats);
  for (const [name, test] of linearFormats) ajv.addFormat(name, test);
  return ajv;
}
