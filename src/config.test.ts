import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';
import { parseDuration, parseDurationList } from './platform/duration.js';

const key = Buffer.alloc(32, 7).toString('base64');

describe('config', () => {
  it('parses the contract defaults', () => {
    const c = loadConfig({ ATRIUM_ENCRYPTION_KEY: key, ATRIUM_DATA_DIR: '/tmp/atrium-config-test' });
    expect(c.inboundMailDomain).toBe('inbound.atrium.local');
    expect(c.port).toBe(3000);
    expect(c.host).toBe('127.0.0.1');
    expect(c.emulators).toBe(true);
    expect(c.webhooks.retryDelaysMs).toEqual([60_000, 300_000, 1_800_000, 7_200_000, 43_200_000]);
    expect(c.webhooks.timeoutMs).toBe(10_000);
    expect(c.health.intervalMs).toBe(60_000);
    expect(c.health.ttlMs).toBe(30 * 86_400_000);
    expect(c.operatorTokenGenerated).toBe(true);
  });

  it('keeps a generated operator token in the data dir, so it survives a restart', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'atrium-operator-'));
    const first = loadConfig({ ATRIUM_ENCRYPTION_KEY: key, ATRIUM_DATA_DIR: dataDir });
    const second = loadConfig({ ATRIUM_ENCRYPTION_KEY: key, ATRIUM_DATA_DIR: dataDir });
    expect(first.operatorToken).toMatch(/^op_/);
    expect(second.operatorToken).toBe(first.operatorToken);
    expect(readFileSync(join(dataDir, 'operator.token'), 'utf8').trim()).toBe(first.operatorToken);
    expect(statSync(join(dataDir, 'operator.token')).mode & 0o777).toBe(0o600);
    const configured = loadConfig({
      ATRIUM_ENCRYPTION_KEY: key,
      ATRIUM_DATA_DIR: dataDir,
      ATRIUM_OPERATOR_TOKEN: 'x'.repeat(24),
    });
    expect(configured.operatorToken).toBe('x'.repeat(24));
    expect(configured.operatorTokenGenerated).toBe(false);
  });

  it('refuses production without an encryption key', () => {
    expect(() =>
      loadConfig({ NODE_ENV: 'production', ATRIUM_EMULATORS: 'off', ATRIUM_OPERATOR_TOKEN: 'x'.repeat(20) }),
    ).toThrow(/ATRIUM_ENCRYPTION_KEY/);
  });

  it('refuses production with emulators on', () => {
    expect(() =>
      loadConfig({
        NODE_ENV: 'production',
        ATRIUM_EMULATORS: 'on',
        ATRIUM_ENCRYPTION_KEY: key,
        ATRIUM_OPERATOR_TOKEN: 'x'.repeat(20),
      }),
    ).toThrow(ConfigError);
  });

  it('turns emulators off by default in production', () => {
    const c = loadConfig({ NODE_ENV: 'production', ATRIUM_ENCRYPTION_KEY: key, ATRIUM_OPERATOR_TOKEN: 'x'.repeat(20) });
    expect(c.emulators).toBe(false);
  });

  it('rejects a malformed key, duration or URL with a clear message', () => {
    expect(() => loadConfig({ ATRIUM_ENCRYPTION_KEY: 'c2hvcnQ=' })).toThrow(/32 bytes/);
    expect(() => loadConfig({ ATRIUM_ENCRYPTION_KEY: key, ATRIUM_WEBHOOK_TIMEOUT: 'soon' })).toThrow(
      /ATRIUM_WEBHOOK_TIMEOUT/,
    );
    expect(() => loadConfig({ ATRIUM_ENCRYPTION_KEY: key, DATABASE_URL: 'not a url' })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ ATRIUM_ENCRYPTION_KEY: key, ATRIUM_WEBHOOK_RETRY_DELAYS: '1m,x' })).toThrow(
      /RETRY_DELAYS/,
    );
  });

  it('stops on every value it cannot take, naming the variable (switches, log level, host, URLs, zero durations)', () => {
    for (const [name, value] of [
      ['ATRIUM_EMULATORS', 'enabled'],
      ['ATRIUM_SEED_DEMO', 'bogus'],
      ['ATRIUM_LOG_LEVEL', 'verbose'],
      ['HOST', 'not_a_host'],
      ['ATRIUM_PUBLIC_URL', 'foo:bar'],
      ['SMTP_URL', 'notaurl'],
      ['DATABASE_URL', 'mysql://127.0.0.1:1/x'],
      ['ATRIUM_ADMIN_ALERT_EMAILS', 'ops@clinic.example, not-an-email'],
      ['ATRIUM_MAIL_FROM', 'Atrium <nobody>'],
      ['ATRIUM_SIGNIN_WINDOW', '0s'],
      ['ATRIUM_WEBHOOK_TIMEOUT', '0ms'],
      ['ATRIUM_INBOUND_MAIL_DOMAIN', 'inbound clinic.example'],
      ['ATRIUM_INBOUND_MAIL_DOMAIN', 'ws@inbound.clinic.example'],
      ['ATRIUM_INBOUND_MAIL_DOMAIN', 'inbound..clinic.example'],
      ['ATRIUM_INBOUND_MAIL_DOMAIN', '-inbound.clinic.example'],
    ]) {
      expect(() => loadConfig({ ATRIUM_ENCRYPTION_KEY: key, [name]: value }), `${name}=${value}`).toThrow(
        new RegExp(name),
      );
    }
    const ok = loadConfig({
      ATRIUM_ENCRYPTION_KEY: key,
      ATRIUM_EMULATORS: 'OFF',
      ATRIUM_SEED_DEMO: 'no',
      ATRIUM_LOG_LEVEL: 'warn',
      HOST: '::1',
      ATRIUM_PUBLIC_URL: 'https://clinic.example',
      SMTP_URL: 'smtps://user:pass@mail.example:465',
      ATRIUM_SIGNIN_BACKOFF: '0s',
      DATABASE_URL: 'postgresql://atrium@db.internal:5432/atrium',
      ATRIUM_ADMIN_ALERT_EMAILS: 'ops@clinic.example, it@clinic.example',
      ATRIUM_MAIL_FROM: 'Riverside Clinic <front-desk@clinic.example>',
      ATRIUM_INBOUND_MAIL_DOMAIN: ' Inbound.Clinic.Example ',
    });
    expect(ok).toMatchObject({
      inboundMailDomain: 'inbound.clinic.example',
      emulators: false,
      seedDemo: false,
      logLevel: 'warn',
      host: '::1',
      adminAlertEmails: ['ops@clinic.example', 'it@clinic.example'],
    });
    expect(loadConfig({ ATRIUM_ENCRYPTION_KEY: key, ATRIUM_MAIL_FROM: 'alerts@clinic.example' }).mailFrom).toBe(
      'alerts@clinic.example',
    );
    // Real addresses a strict check would refuse: a local relay's, an internationalised one, an intranet's.
    const loose = loadConfig({
      ATRIUM_ENCRYPTION_KEY: key,
      ATRIUM_ADMIN_ALERT_EMAILS: 'ops@localhost,ärzte@klinik.de',
      ATRIUM_MAIL_FROM: 'Clinic <noreply@intranet>',
    });
    expect(loose.adminAlertEmails).toEqual(['ops@localhost', 'ärzte@klinik.de']);
  });

  it('parses durations', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('10s')).toBe(10_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('1d')).toBe(86_400_000);
    expect(parseDurationList('1s, 2s,3s')).toEqual([1000, 2000, 3000]);
    expect(() => parseDuration('5 minutes')).toThrow();
  });
});
