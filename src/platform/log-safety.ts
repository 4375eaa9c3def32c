// What an error may say in a log line. Logs never carry request bodies or patient data (§1,
// convention 16), but a database error does by default: Drizzle's "Failed query" message and stack
// carry every parameter of the statement (a patient's name, a message's text), and PostgreSQL's
// `detail` quotes the values of a failing key and its data errors quote the value in their message. The logger's `err` serializer writes errors through here.

/** Members of an error (or its causes) that quote stored or submitted values. */
const QUOTING = new Set(['params', 'parameters', 'detail', 'where', 'internalQuery']);
const MAX_CAUSES = 5;

/** PostgreSQL's data and constraint errors (SQLSTATE classes 22, 23) quote the value in their message. */
const QUOTES_VALUES = /^2[23]/;

/** An e-mail address (a patient's, quoted by an SMTP relay's refusal: "550 <jane@example.com>: no such user"). */
const EMAIL = /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/g;
/** A phone number as providers write them (E.164: a plus and 7–15 digits), e.g. in Twilio's "not a valid phone number". */
const PHONE = /\+\d{7,15}\b/g;
/** A URL's query and fragment, which carry tokens and search terms; the address itself stays. */
const URL_QUERY = /(\bhttps?:\/\/[^\s?#"'<>]*)[?#][^\s"'<>]*/gi;

/** What a third party's words may quote that a log must not: addresses, numbers, query strings. */
export function scrubPersonalData(text: string): string {
  return text.replace(URL_QUERY, '$1?[…]').replace(EMAIL, '[e-mail]').replace(PHONE, '[phone]');
}

function scrubText(text: string, err: object): string {
  // Drizzle writes `Failed query: <sql>\nparams: <params>`: the statement stays, its values go. First, while the
  // text still holds the parameters as written: scrubbing an address among them first left the line unmatched,
  // and every other parameter (a name, a password hash, a message) was logged.
  if ('params' in err) {
    const quoted = `params: ${String((err as { params?: unknown }).params)}`;
    text = text.split(quoted).join('params: [not logged]');
    // Should the list be written otherwise than String() writes it: from `params:` to the stack's first frame.
    text = text.replace(/\nparams: (?!\[not logged\])[\s\S]*?(?=\n {4}at |$)/, '\nparams: [not logged]');
  }
  text = scrubPersonalData(text);
  const code = (err as { code?: unknown; severity?: unknown }).code;
  if (typeof code === 'string' && 'severity' in err && QUOTES_VALUES.test(code)) {
    text = text.replace(/"(?:[^"\\]|\\.)*"/g, '"…"');
  }
  return text;
}

export interface LoggedError {
  [member: string]: unknown;
  type: string;
  message: string;
  stack: string;
}

/** PostgreSQL's members whose words are the server's own, never a stored value. */
const FREE_TEXT_OK = new Set(['severity', 'routine', 'hint', 'file', 'line', 'position']);
const MEMBER_DEPTH = 3;

/**
 * Another member of an error, as a log may have it. Libraries put what the other side said in members of
 * their own (nodemailer's `response` and `rejected`, a client's `body`): numbers, switches and codes stay;
 * a string is kept when it is one short token once addresses, numbers and queries are out (a code, an id, a
 * host), else it is `[not logged]` (free text can quote anyone); objects and lists are walked a few levels.
 */
function member(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') {
    if (typeof value !== 'string') return typeof value === 'function' || typeof value === 'symbol' ? undefined : value;
    const scrubbed = scrubPersonalData(value);
    return scrubbed.length <= 64 && !/\s/.test(scrubbed) ? scrubbed : '[not logged]';
  }
  if (value instanceof Error) return copy(value, MAX_CAUSES);
  if (depth >= MEMBER_DEPTH) return '[not logged]';
  if (Array.isArray(value)) return value.slice(0, 20).map((v) => member(v, depth + 1));
  if (Buffer.isBuffer(value) || ArrayBuffer.isView(value)) return '[not logged]';
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, member(v, depth + 1)]));
}

/** A log-safe copy of an error: type, message, stack, code and the other members, minus quoted values. */
export function safeError(err: Error): LoggedError {
  return copy(err, 0) as LoggedError;
}

function copy(err: unknown, depth: number): unknown {
  // A cause need not be an Error (`{cause: {response: '550 …'}}`): it is walked like any other member.
  if (!(err instanceof Error)) return member(err, 0);
  const source = err as Error & Record<string, unknown>;
  // PostgreSQL's errors (pg and PGlite) carry a severity; only theirs keep their own words (hint, routine).
  const fromPostgres = 'severity' in source;
  const out: Record<string, unknown> = {
    type: source.constructor?.name ?? 'Error',
    message: scrubText(source.message, source),
    stack: scrubText(source.stack ?? '', source),
  };
  for (const [key, value] of Object.entries(source)) {
    if (QUOTING.has(key) || key === 'cause' || key in out) continue;
    out[key] = FREE_TEXT_OK.has(key) && fromPostgres ? value : member(value, 0);
  }
  if (source.cause !== undefined && depth < MAX_CAUSES) out.cause = copy(source.cause, depth + 1);
  return out;
}
