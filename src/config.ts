import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { writeFileDurably } from './platform/durable-files.js';
import { parseDuration, parseDurationList } from './platform/duration.js';
import { parseAllowCidrs } from './platform/http/address-policy.js';
import { parseTrustedProxies } from './platform/http/trust-proxy.js';
import { DEFAULT_INBOUND_MAIL_DOMAIN } from './platform/mail/inbound-address.js';

/**
 * An e-mail address as a relay takes it: something, an @, a domain (no spaces or angle brackets). Looser than
 * zod's e-mail check on purpose: `ops@localhost`, `ärzte@klinik.de` or an intranet domain are real addresses.
 */
const looksLikeAddress = (value: string) => /^[^\s@<>]+@[^\s@<>.][^\s@<>]*$/.test(value) && !value.endsWith('.');

const TRUE = ['1', 'true', 'on', 'yes'];
const FALSE = ['0', 'false', 'off', 'no'];
/** A switch: on/off (true/false, yes/no, 1/0, any case); anything else stops the start, naming the variable. */
const onOff = z
  .string()
  .optional()
  .refine((v) => v === undefined || v === '' || [...TRUE, ...FALSE].includes(v.trim().toLowerCase()), {
    message: 'use on or off',
  });
const bool = (fallback: boolean) =>
  z
    .string()
    .optional()
    .transform((v) => (v === undefined || v === '' ? fallback : TRUE.includes(v.trim().toLowerCase())));

/** A duration (500ms, 10s, 1m, 2h, 1d); above zero unless `allowZero`. */
const duration = (fallback: string, options: { allowZero?: boolean } = {}) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      try {
        const ms = parseDuration(v || fallback);
        if (ms <= 0 && !options.allowZero) {
          ctx.addIssue({ code: 'custom', message: 'use a duration above zero' });
          return z.NEVER;
        }
        return ms;
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    });
const httpUrl = (what: string) =>
  z
    .string()
    .url()
    .refine((v) => /^https?:\/\/[^/?#\s]+/i.test(v), { message: `${what} must be an http:// or https:// URL` });

const envSchema = z.object({
  NODE_ENV: z.string().optional().default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z
    .string()
    .regex(
      /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|[0-9A-Fa-f:.]+)$/,
      'a host name or an IP address',
    )
    .default('127.0.0.1'),
  DATABASE_URL: z
    .string()
    .url()
    .refine((v) => /^postgres(?:ql)?:\/\//i.test(v), { message: 'use postgres://user@host:port/database' })
    .optional()
    .or(z.literal('').transform(() => undefined)),
  ATRIUM_DATA_DIR: z.string().default('./data'),
  ATRIUM_PUBLIC_URL: httpUrl('the public URL').optional(),
  ATRIUM_OPERATOR_TOKEN: z.string().min(16).optional(),
  ATRIUM_ENCRYPTION_KEY: z.string().optional(),
  ATRIUM_EMULATORS: onOff,
  ATRIUM_SEED_DEMO: onOff,
  ATRIUM_WEBHOOK_RETRY_DELAYS: z.string().default('1m,5m,30m,2h,12h'),
  ATRIUM_WEBHOOK_TIMEOUT: duration('10s'),
  ATRIUM_WEBHOOK_ALLOW_CIDRS: z.string().default(''),
  ATRIUM_HEALTH_INTERVAL: duration('60s'),
  ATRIUM_HEALTH_TTL: duration('30d'),
  ATRIUM_CRON_SECRET: z.string().optional(),
  ATRIUM_METRICS_TOKEN: z.string().min(16, 'use at least 16 characters').optional().or(z.literal('')),
  ATRIUM_TURN_URL: z
    .string()
    .regex(
      /^(stun|turn):(\[[0-9a-fA-F:.]+\]|[^:?/\s]+)(:\d{1,5})?(\?transport=udp)?$/i,
      'a stun: or turn: URL over UDP',
    )
    .optional(),
  ATRIUM_ADMIN_ALERT_EMAILS: z
    .string()
    .default('')
    .refine(
      (v) =>
        v
          .split(',')
          .map((a) => a.trim())
          .filter(Boolean)
          .every(looksLikeAddress),
      { message: 'use e-mail addresses separated by commas' },
    ),
  SMTP_URL: z
    .string()
    .optional()
    .refine((v) => !v || /^smtps?:\/\/[^/?#\s]+/i.test(v), { message: 'use smtp://host:port or smtps://…' }),
  ATRIUM_MAIL_FROM: z
    .string()
    .default('Atrium <no-reply@atrium.local>')
    .refine(
      (v) => {
        const address = /^\s*(?:[^<>]*<([^<>\s]+)>|([^<>\s]+))\s*$/.exec(v);
        return !!address && looksLikeAddress(address[1] ?? address[2]);
      },
      { message: 'use an address, or a name and <address>' },
    ),
  ATRIUM_LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: 'use fatal, error, warn, info, debug, trace or silent',
    })
    .default('info'),
  ATRIUM_WORKER_POLL: duration('1s'),
  ATRIUM_SIGNIN_ACCOUNT_LIMIT: z.coerce.number().int().positive().default(5),
  ATRIUM_SIGNIN_ACCOUNT_CEILING: z.coerce.number().int().positive().default(200),
  ATRIUM_SIGNIN_ADDRESS_LIMIT: z.coerce.number().int().positive().default(20),
  ATRIUM_SIGNIN_WINDOW: duration('15m'),
  ATRIUM_SIGNIN_BACKOFF: duration('2s', { allowZero: true }),
  ATRIUM_TRUST_PROXY: z.string().default(''),
  ATRIUM_SESSION_TTL: duration('12h'),
  ATRIUM_AI_BASE_URL: z
    .string()
    .url()
    .optional()
    .or(z.literal('').transform(() => undefined)),
  ATRIUM_AI_API_KEY: z.string().optional(),
  ATRIUM_AI_MODEL: z.string().default('gpt-4o-mini'),
  ATRIUM_AI_FALLBACK_BASE_URL: z
    .string()
    .url()
    .optional()
    .or(z.literal('').transform(() => undefined)),
  ATRIUM_AI_FALLBACK_API_KEY: z.string().optional(),
  ATRIUM_AI_FALLBACK_MODEL: z.string().optional(),
  ATRIUM_AI_TIMEOUT: duration('30s'),
  ATRIUM_CALENDAR_TIMEOUT: duration('10s'),
  ATRIUM_INBOUND_MAIL_SECRET: z.string().min(16).optional(),
  ATRIUM_INBOUND_MAIL_DOMAIN: z
    .string()
    .transform((v) => v.trim().toLowerCase())
    .pipe(
      z
        .string()
        .max(253)
        .regex(
          /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/,
          'a domain name (e.g. inbound.clinic.example)',
        ),
    )
    .default(DEFAULT_INBOUND_MAIL_DOMAIN),
  ATRIUM_S3_ENDPOINT: z.string().url().optional(),
  ATRIUM_S3_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name')
    .optional(),
  ATRIUM_S3_REGION: z.string().default('us-east-1'),
  ATRIUM_S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  ATRIUM_S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  ATRIUM_TTS_API_KEY: z.string().min(8).optional(),
  ATRIUM_TTS_FALLBACK_API_KEY: z.string().min(8).optional(),
  ATRIUM_STRIPE_SECRET_KEY: z
    .string()
    .regex(/^(sk|rk)_(test|live)_\w{10,}$/, 'a Stripe secret key (sk_…)')
    .optional(),
  ATRIUM_STRIPE_WEBHOOK_SECRET: z
    .string()
    .regex(/^whsec_\w{10,}$/, 'a Stripe webhook signing secret (whsec_…)')
    .optional(),
  ATRIUM_GOOGLE_CLIENT_ID: z.string().optional(),
  ATRIUM_GOOGLE_CLIENT_SECRET: z.string().optional(),
  ATRIUM_MICROSOFT_CLIENT_ID: z.string().optional(),
  ATRIUM_MICROSOFT_CLIENT_SECRET: z.string().optional(),
  ATRIUM_ZOOM_CLIENT_ID: z.string().optional(),
  ATRIUM_ZOOM_CLIENT_SECRET: z.string().optional(),
  ATRIUM_ZOOM_ACCOUNT_ID: z.string().optional(),
});

export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  databaseUrl?: string;
  dataDir: string;
  /** External base URL; when undefined it follows the actual listening address. */
  publicUrl?: string;
  operatorToken: string;
  operatorTokenGenerated: boolean;
  encryptionKey: Buffer;
  encryptionKeyId: string;
  emulators: boolean;
  seedDemo: boolean | 'auto';
  webhooks: { retryDelaysMs: number[]; timeoutMs: number; allowCidrs: string[] };
  health: { intervalMs: number; ttlMs: number };
  cronSecret?: string;
  /** When set, /metrics answers only `Authorization: Bearer` with it (or the operator token). */
  metricsToken?: string;
  /** The relay the video probe sends a STUN binding to; unset: the video emulator's responder. */
  turnUrl?: string;
  adminAlertEmails: string[];
  smtpUrl?: string;
  mailFrom: string;
  logLevel: string;
  workerPollMs: number;
  /**
   * Failed sign-ins: `accountLimit` per (account, address) before each further attempt waits
   * `backoffMs` doubling (capped at the window); `accountCeiling` per account from all addresses;
   * `addressLimit` per address; all per `windowMs`.
   */
  signIn: { accountLimit: number; accountCeiling: number; addressLimit: number; windowMs: number; backoffMs: number };
  /** Reverse proxies (addresses/CIDRs) whose X-Forwarded-For is believed; empty = none. */
  trustProxy: string[];
  sessionTtlMs: number;
  /** Chat model provider (OpenAI-compatible); the offline emulator follows it in the fallback chain. */
  ai: {
    baseUrl?: string;
    apiKey?: string;
    model: string;
    timeoutMs: number;
    /** A second, independent provider chat falls back to when the first fails (contract §9). */
    fallback?: { baseUrl: string; apiKey?: string; model: string };
  };
  /**
   * Calendar providers. A provider with credentials talks to the real service; without, it uses its
   * emulator when emulators are on, and is disabled otherwise (production never points at an emulator).
   */
  /** Credential of POST /mail/inbound besides the operator token (contract §5.3). */
  inboundMailSecret?: string;
  /** The domain workspaces receive mail at (`<workspace id>@<domain>`, GET /mail/address; iMIP ORGANIZER). */
  inboundMailDomain: string;
  /** Object storage over the S3 API; unset: the local disk store under the data dir. */
  s3?: { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string };
  /** Voice providers (OpenAI speech, then ElevenLabs); unset: the tts emulator when emulators are on. */
  tts?: { apiKey?: string; fallbackApiKey?: string };
  /** Stripe (checkout and its webhooks); unset: the payments emulator when emulators are on. */
  stripe?: { secretKey: string; webhookSecret: string };
  calendar: {
    timeoutMs: number;
    google?: ProviderCredentials;
    microsoft?: ProviderCredentials;
    zoom?: ProviderCredentials & { accountId?: string };
  };
}

export interface ProviderCredentials {
  clientId: string;
  clientSecret: string;
}

const credentials = (id: string | undefined, secret: string | undefined): ProviderCredentials | undefined =>
  id && secret ? { clientId: id, clientSecret: secret } : undefined;

export class ConfigError extends Error {}

function decodeKey(text: string): Buffer {
  const key = Buffer.from(text, 'base64');
  if (key.length !== 32) throw new ConfigError('ATRIUM_ENCRYPTION_KEY must be 32 bytes, base64-encoded');
  return key;
}

/** Reads a development secret from the data dir, creating it on first use (so it survives restarts). */
function developmentSecret(dataDir: string, name: string, create: () => string): string {
  const file = join(dataDir, name);
  if (existsSync(file)) {
    const kept = readFileSync(file, 'utf8').trim();
    if (kept) return kept;
  }
  const value = create();
  writeFileDurably(file, `${value}\n`, 0o600);
  return value;
}

const developmentKey = (dataDir: string) =>
  developmentSecret(dataDir, 'encryption.key', () => randomBytes(32).toString('base64'));

/** Parses and validates the environment (contract §10). Throws ConfigError, never starts half-configured. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  const envName = e.NODE_ENV.trim().toLowerCase();
  const nodeEnv = envName === 'production' ? 'production' : envName === 'test' ? 'test' : 'development';
  const production = nodeEnv === 'production';
  const emulators =
    e.ATRIUM_EMULATORS === undefined || e.ATRIUM_EMULATORS === '' ? !production : bool(false).parse(e.ATRIUM_EMULATORS);
  const dataDir = resolve(e.ATRIUM_DATA_DIR);

  if (production && emulators) throw new ConfigError('ATRIUM_EMULATORS must be off in production');
  if (production && !e.ATRIUM_ENCRYPTION_KEY) throw new ConfigError('ATRIUM_ENCRYPTION_KEY is required in production');
  if (production && !e.ATRIUM_OPERATOR_TOKEN) throw new ConfigError('ATRIUM_OPERATOR_TOKEN is required in production');
  const seedDemo =
    e.ATRIUM_SEED_DEMO === undefined || e.ATRIUM_SEED_DEMO === '' ? 'auto' : bool(false).parse(e.ATRIUM_SEED_DEMO);
  // The demo accounts' password is published in the README: production never creates them.
  if (production && seedDemo === true) {
    throw new ConfigError('ATRIUM_SEED_DEMO must be off in production (the demo accounts have a published password)');
  }
  let trustProxy: string[];
  try {
    trustProxy = parseTrustedProxies(e.ATRIUM_TRUST_PROXY);
  } catch (err) {
    throw new ConfigError(`ATRIUM_TRUST_PROXY: ${(err as Error).message}`);
  }

  let retryDelaysMs: number[];
  try {
    retryDelaysMs = parseDurationList(e.ATRIUM_WEBHOOK_RETRY_DELAYS);
  } catch (err) {
    throw new ConfigError(`ATRIUM_WEBHOOK_RETRY_DELAYS: ${(err as Error).message}`);
  }

  let allowCidrs: string[];
  try {
    allowCidrs = parseAllowCidrs(e.ATRIUM_WEBHOOK_ALLOW_CIDRS);
  } catch (err) {
    throw new ConfigError(`ATRIUM_WEBHOOK_ALLOW_CIDRS: ${(err as Error).message}`);
  }

  const keyText = e.ATRIUM_ENCRYPTION_KEY ?? developmentKey(dataDir);
  // Generated once into the data dir, so scripts and bookmarks keep working across restarts.
  const operatorToken =
    e.ATRIUM_OPERATOR_TOKEN ??
    developmentSecret(dataDir, 'operator.token', () => `op_${randomBytes(24).toString('base64url')}`);

  return {
    env: nodeEnv,
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir,
    publicUrl: e.ATRIUM_PUBLIC_URL?.replace(/\/$/, ''),
    operatorToken,
    operatorTokenGenerated: !e.ATRIUM_OPERATOR_TOKEN,
    encryptionKey: decodeKey(keyText),
    encryptionKeyId: 'k1',
    emulators,
    seedDemo: production ? false : seedDemo,
    webhooks: {
      retryDelaysMs,
      timeoutMs: e.ATRIUM_WEBHOOK_TIMEOUT,
      allowCidrs,
    },
    health: { intervalMs: e.ATRIUM_HEALTH_INTERVAL, ttlMs: e.ATRIUM_HEALTH_TTL },
    cronSecret: e.ATRIUM_CRON_SECRET || undefined,
    metricsToken: e.ATRIUM_METRICS_TOKEN || undefined,
    turnUrl: e.ATRIUM_TURN_URL || undefined,
    adminAlertEmails: e.ATRIUM_ADMIN_ALERT_EMAILS.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    smtpUrl: e.SMTP_URL || undefined,
    mailFrom: e.ATRIUM_MAIL_FROM,
    logLevel: e.ATRIUM_LOG_LEVEL,
    workerPollMs: e.ATRIUM_WORKER_POLL,
    signIn: {
      accountLimit: e.ATRIUM_SIGNIN_ACCOUNT_LIMIT,
      accountCeiling: e.ATRIUM_SIGNIN_ACCOUNT_CEILING,
      addressLimit: e.ATRIUM_SIGNIN_ADDRESS_LIMIT,
      windowMs: e.ATRIUM_SIGNIN_WINDOW,
      backoffMs: e.ATRIUM_SIGNIN_BACKOFF,
    },
    trustProxy,
    sessionTtlMs: e.ATRIUM_SESSION_TTL,
    ai: {
      baseUrl: e.ATRIUM_AI_BASE_URL?.replace(/\/$/, ''),
      apiKey: e.ATRIUM_AI_API_KEY || undefined,
      model: e.ATRIUM_AI_MODEL,
      timeoutMs: e.ATRIUM_AI_TIMEOUT,
      ...(e.ATRIUM_AI_FALLBACK_BASE_URL
        ? {
            fallback: {
              baseUrl: e.ATRIUM_AI_FALLBACK_BASE_URL.replace(/\/$/, ''),
              apiKey: e.ATRIUM_AI_FALLBACK_API_KEY || undefined,
              model: e.ATRIUM_AI_FALLBACK_MODEL ?? e.ATRIUM_AI_MODEL,
            },
          }
        : {}),
    },
    inboundMailSecret: e.ATRIUM_INBOUND_MAIL_SECRET || undefined,
    inboundMailDomain: e.ATRIUM_INBOUND_MAIL_DOMAIN,
    s3:
      e.ATRIUM_S3_BUCKET && e.ATRIUM_S3_ACCESS_KEY_ID && e.ATRIUM_S3_SECRET_ACCESS_KEY
        ? {
            endpoint: (e.ATRIUM_S3_ENDPOINT ?? `https://s3.${e.ATRIUM_S3_REGION}.amazonaws.com`).replace(/\/$/, ''),
            bucket: e.ATRIUM_S3_BUCKET,
            region: e.ATRIUM_S3_REGION,
            accessKeyId: e.ATRIUM_S3_ACCESS_KEY_ID,
            secretAccessKey: e.ATRIUM_S3_SECRET_ACCESS_KEY,
          }
        : undefined,
    tts:
      e.ATRIUM_TTS_API_KEY || e.ATRIUM_TTS_FALLBACK_API_KEY
        ? { apiKey: e.ATRIUM_TTS_API_KEY, fallbackApiKey: e.ATRIUM_TTS_FALLBACK_API_KEY }
        : undefined,
    stripe:
      e.ATRIUM_STRIPE_SECRET_KEY && e.ATRIUM_STRIPE_WEBHOOK_SECRET
        ? { secretKey: e.ATRIUM_STRIPE_SECRET_KEY, webhookSecret: e.ATRIUM_STRIPE_WEBHOOK_SECRET }
        : undefined,
    calendar: {
      timeoutMs: e.ATRIUM_CALENDAR_TIMEOUT,
      google: credentials(e.ATRIUM_GOOGLE_CLIENT_ID, e.ATRIUM_GOOGLE_CLIENT_SECRET),
      microsoft: credentials(e.ATRIUM_MICROSOFT_CLIENT_ID, e.ATRIUM_MICROSOFT_CLIENT_SECRET),
      zoom: (() => {
        const zoom = credentials(e.ATRIUM_ZOOM_CLIENT_ID, e.ATRIUM_ZOOM_CLIENT_SECRET);
        return zoom && { ...zoom, accountId: e.ATRIUM_ZOOM_ACCOUNT_ID };
      })(),
    },
  };
}

/** A config for tests: no files written, emulators on, fast workers. */
export function loadTestConfig(overrides: Partial<Config> = {}): Config {
  const base = loadConfig({
    NODE_ENV: 'test',
    ATRIUM_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ATRIUM_OPERATOR_TOKEN: 'op_test_operator_token_0123456789',
    ATRIUM_CRON_SECRET: 'cron_test_secret',
    ATRIUM_EMULATORS: 'on',
    ATRIUM_SEED_DEMO: 'off',
    ATRIUM_LOG_LEVEL: process.env.ATRIUM_LOG_LEVEL ?? 'silent',
    ATRIUM_WORKER_POLL: '100ms',
    ATRIUM_DATA_DIR: '/nonexistent-atrium-test-dir',
    PORT: '0',
  });
  return { ...base, ...overrides };
}
