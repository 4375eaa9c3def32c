import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { type Config, loadTestConfig } from '../../src/config.js';
import type { Database } from '../../src/platform/db/client.js';
import { type Background, startBackground } from '../../src/workers.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { assertMatchesOpenApi } from './openapi-check.js';

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  database: Database;
  testDb: TestDatabase;
  /** http://127.0.0.1:<port> — the app listens, so emulators are reachable over real HTTP. */
  baseUrl: string;
  /** Starts the workers (mail, webhooks, …) of this instance. */
  startBackground(): Promise<Background>;
  /** Another app instance on the same database (PostgreSQL server only). */
  startInstance(
    overrides?: Partial<Config>,
  ): Promise<{ app: FastifyInstance; baseUrl: string; close(): Promise<void> }>;
  request(options: InjectOptions & { token?: string }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app.atrium.selfUrl();
}

/**
 * Builds the real app on a fresh database, listening on a random loopback port. `logStream` receives its log
 * lines (pass a `logLevel` among the overrides: tests log nothing by default); see `captureLogs`.
 */
export async function createTestApp(
  overrides: Partial<Config> = {},
  options: { logStream?: NodeJS.WritableStream } = {},
): Promise<TestApp> {
  const testDb = await createTestDatabase();
  const config = loadTestConfig(overrides);
  const app = await buildApp({ config, database: testDb.database, logStream: options.logStream });
  const baseUrl = await listen(app);
  const backgrounds: Background[] = [];
  const instances: { close(): Promise<void> }[] = [];
  return {
    app,
    config,
    database: testDb.database,
    testDb,
    baseUrl,
    async startBackground() {
      const bg = await startBackground(app);
      backgrounds.push(bg);
      return bg;
    },
    async startInstance(more = {}) {
      const database = await testDb.openAnother();
      const other = await buildApp({ config: { ...config, ...more }, database });
      const url = await listen(other);
      const instance = {
        app: other,
        baseUrl: url,
        close: async () => {
          await other.close();
        },
      };
      instances.push(instance);
      return instance;
    },
    async request({ token, headers, ...options }) {
      const res = await app.inject({
        ...options,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      });
      assertMatchesOpenApi(app, options.method ?? 'GET', String(options.url ?? '/'), res);
      return res;
    },
    async close() {
      await Promise.all(backgrounds.map((b) => b.stop()));
      await Promise.all(instances.map((i) => i.close()));
      await app.close();
      await testDb.drop();
    },
  };
}
