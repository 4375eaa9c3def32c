// What a list asks the provider for: exactly the fields its parser reads. A week of 300 events is
// ~190 KB from Google and ~270 KB from Graph in full; asking only for what we read (Google's partial
// response `fields`, Graph's `$select`) shrinks what the provider writes, the wire carries and we
// parse. Derived from the zod schemas the adapters parse with, so the two cannot drift apart.
import type { z } from 'zod';

type Introspectable = z.ZodType & {
  def: { type: string; innerType?: z.ZodType; element?: z.ZodType };
  shape?: Record<string, z.ZodType>;
};

/** The object schema inside optional/nullable/default wrappers and arrays, if there is one. */
function objectOf(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  let s = schema as Introspectable;
  for (;;) {
    if (s.def.type === 'object') return s.shape;
    const inner = s.def.innerType ?? s.def.element;
    if (!inner) return undefined;
    s = inner as Introspectable;
  }
}

/** Google's partial-response syntax for the fields `schema` reads: `id,start(dateTime,date),…`. */
export function fieldMask(schema: z.ZodType): string {
  const shape = objectOf(schema);
  if (!shape) throw new Error('fieldMask needs an object schema');
  return Object.entries(shape)
    .map(([key, value]) => {
      const inner = objectOf(value);
      return inner ? `${key}(${fieldMask(value)})` : key;
    })
    .join(',');
}

/** Graph's `$select`: the top-level properties `schema` reads (Graph selects no deeper). */
export function selectList(schema: z.ZodType): string {
  const shape = objectOf(schema);
  if (!shape) throw new Error('selectList needs an object schema');
  return Object.keys(shape).join(',');
}
