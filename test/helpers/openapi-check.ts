// Holds every API response a test sees to the OpenAPI document the service publishes: the status
// must be documented, every header the document requires must be there (X-Request-Id), the media
// type must be the documented one, and the body must validate against the documented schema.
// Clients are generated from the document, so it cannot drift.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

interface MediaObject {
  schema?: object;
}
interface HeaderObject {
  required?: boolean;
  $ref?: string;
}
interface Operation {
  responses?: Record<string, { content?: Record<string, MediaObject>; headers?: Record<string, HeaderObject> }>;
}
interface CompiledPath {
  pattern: RegExp;
  operations: Record<string, Operation>;
}
interface Checker {
  paths: CompiledPath[];
  /** `#/components/headers`, for the responses' header references. */
  headers: Record<string, HeaderObject>;
  ajv: Ajv2020;
  validators: Map<object, ReturnType<Ajv2020['compile']>>;
}

const checkers = new WeakMap<FastifyInstance, Checker>();
/**
 * Test apps of one run serve the same routes with the same schemas, so their documents are the
 * same: one checker (document, compiled validators) is shared by every app with the same route table.
 */
const byRouteTable = new Map<string, Checker>();

function compile(app: FastifyInstance): Checker {
  const doc = app.swagger() as {
    paths?: Record<string, Record<string, Operation>>;
    components?: { headers?: Record<string, HeaderObject> };
  };
  const paths = Object.entries(doc.paths ?? {}).map(([template, operations]) => ({
    pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
    operations,
  }));
  // Exact paths before templated ones, so /direct-messages/search is not read as /direct-messages/{threadId}.
  paths.sort((a, b) => a.pattern.source.split('[^/]+').length - b.pattern.source.split('[^/]+').length);
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  return { paths, headers: doc.components?.headers ?? {}, ajv, validators: new Map() };
}

function statusKey(responses: Record<string, unknown>, status: number): string | undefined {
  const exact = String(status);
  if (exact in responses) return exact;
  const range = `${exact[0]}XX`;
  if (range in responses) return range;
  if (range.toLowerCase() in responses) return range.toLowerCase();
  return 'default' in responses ? 'default' : undefined;
}

/** Throws with a readable message when the response is not what the document promises. */
export function assertMatchesOpenApi(
  app: FastifyInstance,
  method: string,
  url: string,
  res: LightMyRequestResponse,
): void {
  const path = url.split('?')[0];
  if (!path.startsWith('/api/v1/') || path === '/api/v1/openapi.json') return;
  let checker = checkers.get(app);
  if (!checker) {
    const routes = app.printRoutes({ commonPrefix: false, includeHooks: false });
    checker = byRouteTable.get(routes);
    if (!checker) {
      checker = compile(app);
      byRouteTable.set(routes, checker);
    }
    checkers.set(app, checker);
  }
  const where = `${method.toUpperCase()} ${path} → ${res.statusCode}`;
  const match = checker.paths.find((p) => p.pattern.test(path) && p.operations[method.toLowerCase()]);
  if (!match) {
    // Unknown routes answer a 404 problem; anything else must be documented.
    if (res.statusCode === 404 || res.statusCode === 405) return;
    throw new Error(`OpenAPI: ${where} is not a documented operation`);
  }
  const responses = match.operations[method.toLowerCase()].responses ?? {};
  const key = statusKey(responses, res.statusCode);
  if (!key) throw new Error(`OpenAPI: ${where}: status not documented (documented: ${Object.keys(responses)})`);
  for (const [name, declared] of Object.entries(responses[key].headers ?? {})) {
    const header = declared.$ref ? checker.headers[declared.$ref.split('/').at(-1)!] : declared;
    if (header?.required && res.headers[name.toLowerCase()] === undefined) {
      throw new Error(`OpenAPI: ${where}: the required header ${name} is missing`);
    }
  }
  const content = responses[key].content;
  if (!content || res.statusCode === 204 || res.body === '') return;
  const type = String(res.headers['content-type'] ?? '')
    .split(';')[0]
    .trim();
  const media = content[type];
  if (!media) {
    throw new Error(`OpenAPI: ${where}: sent ${type}, documented ${Object.keys(content).join(', ')}`);
  }
  if (!media.schema || !type.includes('json')) return;
  let validate = checker.validators.get(media.schema);
  if (!validate) {
    validate = checker.ajv.compile(media.schema);
    checker.validators.set(media.schema, validate);
  }
  if (!validate(JSON.parse(res.body))) {
    throw new Error(`OpenAPI: ${where}: body does not match the schema: ${checker.ajv.errorsText(validate.errors)}`);
  }
}
