// A ready-made endpoint for a private skill: verifies Atrium's signature, validates the input
// against the tool's inputSchema and runs the matching handler.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createAjv } from './ajv.js';
import { checkToolInput, type SkillManifest } from './manifest.js';
import type { ToolCallRequest } from './protocol.js';
import { type HeaderBag, SignatureError, verifyRequest } from './verify.js';

export type ToolHandler = (input: Record<string, unknown>, call: ToolCallRequest) => unknown | Promise<unknown>;

export interface SkillEndpointOptions {
  secret: string;
  manifest: SkillManifest;
  tools: Record<string, ToolHandler>;
  toleranceSeconds?: number;
}

export interface EndpointAnswer {
  status: number;
  body: unknown;
}

const fail = (status: number, code: string, message: string): EndpointAnswer => ({
  status,
  body: { error: { code, message } },
});

/** Framework-neutral: give it the headers and the raw body, send back `status` and JSON `body`. */
export async function handleToolCall(
  opts: SkillEndpointOptions,
  headers: HeaderBag,
  rawBody: string,
): Promise<EndpointAnswer> {
  try {
    verifyRequest(opts.secret, headers, rawBody, { toleranceSeconds: opts.toleranceSeconds });
  } catch (err) {
    if (err instanceof SignatureError) return fail(401, err.reason, err.message);
    throw err;
  }
  let call: ToolCallRequest;
  try {
    call = JSON.parse(rawBody) as ToolCallRequest;
  } catch {
    return fail(400, 'bad_json', 'The body is not JSON');
  }
  const tool = opts.manifest.tools.find((t) => t.name === call.tool);
  const handler = opts.tools[call.tool];
  if (!tool || !handler) return fail(404, 'unknown_tool', `No tool ${call.tool}`);
  const check = checkToolInput(tool, call.input, ajv);
  if (!check.ok) return fail(422, 'invalid_input', check.errors.map((e) => `${e.path}: ${e.message}`).join('; '));
  try {
    return { status: 200, body: { result: await handler(call.input, call) } };
  } catch (err) {
    return fail(500, 'tool_failed', err instanceof Error ? err.message : String(err));
  }
}

const ajv = createAjv();

/** A Node `http`/`https` request listener for the endpoint. */
export function createSkillHandler(opts: SkillEndpointOptions) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handleToolCall(opts, req.headers, Buffer.concat(chunks).toString('utf8'))
        .then((answer) => {
          res.writeHead(answer.status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(answer.body));
        })
        .catch(() => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { code: 'internal', message: 'Unexpected error' } }));
        });
    });
  };
}
