// Request body parsing for every route: JSON (an empty body means "no body"), and for routes that
// opt in, the exact bytes received (`config: { rawBody: true }` → `request.rawBody`, for signature
// checks over what the sender signed) and `application/x-www-form-urlencoded` forms
// (`config: { formBody: true }`; other routes answer 415). The app's body limit applies to all.
import { isUtf8 } from 'node:buffer';
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import { AppError, validationFailed } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The body exactly as received; set only on routes with `config: { rawBody: true }`. */
    rawBody?: Buffer;
  }
  interface FastifyContextConfig {
    /** Keep the received bytes in `request.rawBody` (signature-verified webhooks). */
    rawBody?: boolean;
    /** Accept `application/x-www-form-urlencoded` bodies, parsed by `parseFormBody`. */
    formBody?: boolean;
  }
}

export const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';

/** A parsed form: a key sent once is a string, a key sent more than once an array in sent order. */
export type FormBody = Record<string, string | string[]>;

/** Parses a URL-encoded form (UTF-8); `+` is a space. The object has no prototype (`__proto__` is a plain key). */
export function parseFormBody(text: string): FormBody {
  const out: FormBody = Object.create(null);
  for (const [key, value] of new URLSearchParams(text)) {
    const seen = out[key];
    if (seen === undefined) out[key] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else out[key] = [seen, value];
  }
  return out;
}

const keepRaw = (request: FastifyRequest, body: Buffer) => {
  if (request.routeOptions.config.rawBody) request.rawBody = body;
};

const NOT_UTF8 = 'The body is not valid UTF-8';
const NOT_UTF8_CHARSET = 'JSON must be UTF-8 (RFC 8259 §8.1): send no charset or charset=utf-8';

/**
 * False when a `charset` parameter of the content type names anything but UTF-8 (`utf-8`, `utf8`, any case,
 * quoted or not). JSON exchanged between systems is UTF-8 (RFC 8259 §8.1): a body declared Latin-1 or EBCDIC
 * would otherwise be read as UTF-8, silently changing what the sender meant.
 */
export function declaresUtf8OrNothing(contentType: string | undefined): boolean {
  if (!contentType) return true;
  for (const parameter of contentType.split(';').slice(1)) {
    const eq = parameter.indexOf('=');
    if (eq === -1 || parameter.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    const value = parameter
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    if (value !== 'utf-8' && value !== 'utf8') return false;
  }
  return true;
}

/** Replaces Fastify's body parsers: call once, right after creating the app. */

export function registerBodyParsers(app: FastifyInstance): void {
  // JSON only by default: anything else is 415 (emulators that speak other formats add their own parsers).
  app.removeContentTypeParser('text/plain');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    if (!declaresUtf8OrNothing(request.headers['content-type'])) {
      return done(new AppError('unsupported_media_type', 415, NOT_UTF8_CHARSET), undefined);
    }
    const bytes = body as Buffer;
    keepRaw(request, bytes);
    // JSON is UTF-8 (RFC 8259): other bytes would be stored as U+FFFD, silently changing what was sent.
    if (!isUtf8(bytes)) return done(validationFailed([{ path: 'body', message: NOT_UTF8 }], NOT_UTF8), undefined);
    const text = bytes.toString('utf8');
    // An empty body with a JSON content type (body-less actions like rotate or replay) means "no body".
    if (text.trim() === '') return done(null, undefined);
    return parseJson(request, text, done);
  });
  app.addContentTypeParser(FORM_CONTENT_TYPE, { parseAs: 'buffer' }, (request, body, done) => {
    if (!request.routeOptions.config.formBody) {
      return done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(FORM_CONTENT_TYPE), undefined);
    }
    const bytes = body as Buffer;
    keepRaw(request, bytes);
    return done(null, parseFormBody(bytes.toString('utf8')));
  });
}
