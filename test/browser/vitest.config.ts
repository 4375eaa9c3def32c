import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Browser tests: the real server in-process plus Debian's chromium. Run with `npm run test:browser`.
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['test/browser/**/*.test.ts'],
    testTimeout: 60_000,
    // Starting the server and Chromium can take a while on a busy two-core machine.
    hookTimeout: 180_000,
    fileParallelism: false,
    pool: 'forks',
  },
});
