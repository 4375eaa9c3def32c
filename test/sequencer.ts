// Test file order. Vitest runs the files it has timings for longest first, and files it has never
// timed (a fresh clone, as in CI) largest first. Size says little here: the longest files are small
// process-level tests (a first start, real retry waits) that, started last, leave one worker running
// alone at the end. Until the run has timings of its own, these files go first.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The longest files, longest first (seconds on a 2-core machine, for orientation only). */
export const LONGEST_FILES = [
  'test/demo-seed-recovery.test.ts', // ~40 s: starts the service as a process (tsx) several times
  'src/modules/webhooks/delivery.test.ts', // ~14 s: real retry and lease waits
  'test/first-start.test.ts', // ~12 s: builds and runs `npm start` twice
  'test/shutdown.test.ts', // ~15 s: starts the service as a process and stops it under load
  'src/modules/webhooks/delivery-migration.test.ts', // ~8 s: migrates from an empty cluster
  'test/api-fuzz.test.ts', // ~8 s: ~3,000 hostile requests over every operation
  'src/modules/identity/identity.test.ts', // ~6 s: sign-in throttle and backoff waits
  'src/modules/health/monitoring.test.ts', // ~5 s: probe timeouts
  'src/platform/jobs/jobs.test.ts',
  'src/modules/identity/invitations.test.ts',
  'src/platform/db/embedded.test.ts',
];

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const key = (file: TestSpecification) => file.moduleId.slice(root.length + 1);
    const timed = sorted.every((file) => this.ctx.cache.getFileTestResults(`${file.project.name}:${key(file)}`));
    if (timed) return sorted;
    const rank = (file: TestSpecification) => {
      const at = LONGEST_FILES.indexOf(key(file));
      return at === -1 ? LONGEST_FILES.length : at;
    };
    return sorted
      .map((file, at) => ({ file, at }))
      .sort((a, b) => rank(a.file) - rank(b.file) || a.at - b.at)
      .map((x) => x.file);
  }
}
