// Builds the run's migrated template database once, before the test workers start (test/helpers/db-template.ts).
import { ensurePgliteTemplate, ensureServerTemplate } from './helpers/db-template.js';

export default async function setup(): Promise<void> {
  const serverUrl = process.env.ATRIUM_TEST_DATABASE_URL || undefined;
  if (serverUrl) await ensureServerTemplate(serverUrl);
  else await ensurePgliteTemplate();
}
