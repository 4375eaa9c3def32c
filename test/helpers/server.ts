import { createTestApp } from './app.js';

/** The real server for browser tests: fresh database, web app, emulators, workers. */
export async function startTestServer(): Promise<{ baseUrl: string; operatorToken: string; close(): Promise<void> }> {
  const t = await createTestApp();
  await t.startBackground();
  return { baseUrl: t.baseUrl, operatorToken: t.config.operatorToken, close: () => t.close() };
}
