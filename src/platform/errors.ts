import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { ZodError } from 'zod';

export interface FieldProblem {
  path: string;
  message: string;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** The one error type domain code throws; rendered as RFC 9457 problem+json. */
export class AppError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    detail?: string,
    readonly extras: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail ?? code);
  }
}

export const notFound = (what = 'Resource') => new AppError('not_found', 404, `${what} not found`);
export const forbidden = (detail = 'Your role may not do this') => new AppError('forbidden', 403, detail);
export const conflict = (detail: string, extras?: Record<string, unknown>) =>
  new AppError('conflict', 409, detail, extras);
export const unprocessable = (code: string, detail: string, extras?: Record<string, unknown>) =>
  new AppError(code, 422, detail, extras);
export const validationFailed = (errors: FieldProblem[], detail = 'The request is invalid') =>
  new AppError('validation_failed', 400, detail, { errors });

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  requestId: string;
  errors?: FieldProblem[];
  [extra: string]: unknown;
}

export function problemBody(
  request: Pick<FastifyRequest, 'id'>,
  status: number,
  code: string,
  detail: string,
  extras: Record<string, unknown> = {},
): Problem {
  return {
    type: `https://atrium.dev/problems/${code.replace(/_/g, '-')}`,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    code,
    requestId: String(request.id),
    ...extras,
  };
}

export function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  code: string,
  detail: string,
  extras: Record<string, unknown> = {},
): FastifyReply {
  // Contract §1: a 429 always says when to come back; whoever refuses names the wait, this is the floor.
  if (status === 429 && !reply.hasHeader('retry-after')) reply.header('retry-after', '1');
  return reply
    .status(status)
    .header('content-type', 'application/problem+json; charset=utf-8')
    .send(problemBody(request, status, code, detail, extras));
}

function zodProblems(error: ZodError, prefix: string): FieldProblem[] {
  return error.issues.map((issue) => ({
    path: [prefix, ...issue.path.map(String)].filter(Boolean).join('.'),
    message: issue.message,
  }));
}

/** SQLSTATE classes and codes that mean the database could not serve the query, not that the query was wrong. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '53400']);
const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * The database went away under this request (a failover, a restart, `pg_terminate_backend`, too many connections,
 * a network cut): node-postgres's connection errors and SQLSTATE class 08 / 57P0x / 53xxx, also when wrapped (an
 * ORM's error keeps the driver's as `cause`). Such a request is answered 503 `unavailable` with Retry-After, not
 * 500: nothing is wrong with it, and asking again shortly may well work.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code))) return true;
    if (typeof code === 'string' && UNAVAILABLE_NODE_CODES.has(code) && depth > 0) return true;
    if (
      typeof message === 'string' &&
      /^(Connection terminated( unexpectedly| due to connection timeout)?|Client has encountered a connection error and is not queryable|timeout exceeded when trying to connect)$/.test(
        message,
      )
    )
      return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** Maps every error (ours, Fastify's, zod's, unknown) to problem+json. 5xx never leak internals. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError | Error, request, reply) => {
    if (error instanceof AppError) {
      for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
      if (error.status >= 500) request.log.warn({ err: error }, 'dependency failure');
      return sendProblem(request, reply, error.status, error.code, error.message, error.extras);
    }
    if (hasZodFastifySchemaValidationErrors(error)) {
      const where = (error as FastifyError).validationContext ?? 'body';
      const errors = error.validation.map((v) => ({
        path: [where, ...v.instancePath.split('/').filter(Boolean)].join('.'),
        message: v.message ?? 'Invalid value',
      }));
      return sendProblem(request, reply, 400, 'validation_failed', `The request ${where} is invalid`, { errors });
    }
    if (error instanceof ZodError) {
      return sendProblem(request, reply, 400, 'validation_failed', 'The request is invalid', {
        errors: zodProblems(error, ''),
      });
    }
    const fe = error as FastifyError;
    switch (fe.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendProblem(request, reply, 413, 'payload_too_large', 'The request body is too large');
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return sendProblem(request, reply, 415, 'unsupported_media_type', 'Send application/json');
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return sendProblem(request, reply, 400, 'validation_failed', 'The request body is not valid JSON', {
          errors: [{ path: 'body', message: fe.message }],
        });
    }
    if (fe.statusCode === 400 && error instanceof SyntaxError) {
      return sendProblem(request, reply, 400, 'validation_failed', 'The request body is not valid JSON', {
        errors: [{ path: 'body', message: error.message }],
      });
    }
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      const code = fe.statusCode === 429 ? 'rate_limited' : fe.statusCode === 404 ? 'not_found' : 'validation_failed';
      return sendProblem(request, reply, fe.statusCode, code, fe.message);
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unavailable');
      reply.header('retry-after', '1');
      return sendProblem(request, reply, 503, 'unavailable', 'The service is briefly unavailable: try again shortly');
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(request, reply, 500, 'internal_error', 'An unexpected error occurred');
  });
}
