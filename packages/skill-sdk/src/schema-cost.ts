// Bounds on what validating a tool input may cost, checked when a manifest is registered. RE2 makes
// each `pattern` linear; these keep the rest of JSON Schema linear in the input too:
//  - `$ref`s are local (`#/...`) and not recursive, and the schema with every `$ref` expanded
//    stays under MAX_EXPANDED_NODES (shared definitions referenced twice per level double the work
//    per level: 22 levels took 250 ms on a 2-item input, 30 would take a minute);
//  - `uniqueItems` compares items pairwise unless they are scalars: it needs scalar `items` or a
//    `maxItems` of at most MAX_UNIQUE_ITEMS (20,000 objects took 27 s).
export const MAX_EXPANDED_NODES = 1000;
export const MAX_UNIQUE_ITEMS = 1000;

const SCALARS = new Set(['string', 'number', 'integer', 'boolean', 'null']);
const ONE = ['items', 'additionalItems', 'contains', 'additionalProperties', 'propertyNames', 'not', 'if', 'then'];
const ONE_MORE = ['else', 'unevaluatedItems', 'unevaluatedProperties'];
const MANY = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];
const MAP = ['properties', 'patternProperties', 'dependentSchemas', 'dependencies'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function resolvePointer(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) node = node[Number(part)];
    else if (isObject(node)) node = node[part];
    else return undefined;
  }
  return node;
}

function scalarItems(items: unknown): boolean {
  if (!isObject(items)) return false;
  const types = Array.isArray(items.type) ? items.type : [items.type];
  return types.length > 0 && types.every((t) => typeof t === 'string' && SCALARS.has(t));
}

/** Why validating against `schema` could cost more than linear time in the input; empty when fine. */
export function schemaCostProblems(schema: unknown): string[] {
  const problems = new Set<string>();
  let nodes = 0;
  const walk = (node: unknown, refs: unknown[]): void => {
    if (problems.size > 0 && nodes > MAX_EXPANDED_NODES) return;
    if (!isObject(node)) return;
    if (++nodes > MAX_EXPANDED_NODES) {
      problems.add(`the schema is too large once its $refs are expanded (over ${MAX_EXPANDED_NODES} subschemas)`);
      return;
    }
    if ('$dynamicRef' in node || '$recursiveRef' in node)
      problems.add('$dynamicRef and $recursiveRef are not supported');
    if (typeof node.$ref === 'string') {
      const target = resolvePointer(schema, node.$ref);
      if (!node.$ref.startsWith('#') || (node.$ref !== '#' && !node.$ref.startsWith('#/'))) {
        problems.add(`$ref ${JSON.stringify(node.$ref)}: only local references (#/...) are supported`);
      } else if (refs.includes(target)) {
        problems.add(`$ref ${JSON.stringify(node.$ref)} is recursive`);
      } else if (target !== undefined) {
        walk(target, [...refs, target]);
      }
    }
    if (node.uniqueItems === true && !scalarItems(node.items)) {
      const max = node.maxItems;
      if (typeof max !== 'number' || max > MAX_UNIQUE_ITEMS) {
        problems.add(
          `uniqueItems needs items of a scalar type or maxItems of at most ${MAX_UNIQUE_ITEMS} (it compares items pairwise)`,
        );
      }
    }
    for (const key of [...ONE, ...ONE_MORE]) if (isObject(node[key])) walk(node[key], refs);
    for (const key of MANY) {
      const list = node[key];
      if (Array.isArray(list)) for (const item of list) walk(item, refs);
    }
    for (const key of MAP) {
      const map = node[key];
      if (isObject(map)) for (const item of Object.values(map)) walk(item, refs);
    }
  };
  walk(schema, [schema]);
  return [...problems];
}
