// Durable background jobs: typed definitions, enqueued in the caller's transaction, claimed with
// FOR UPDATE SKIP LOCKED, retried with backoff, dead after max attempts. See docs/platform.md.
export {
  type Backoff,
  backoffMs,
  cancelJobs,
  type DeadJob,
  defineJob,
  type EnqueueOptions,
  enqueueJob,
  insertJobsSql,
  JOBS_CHANNEL,
  type JobContext,
  type JobDefinition,
  type JobOptions,
  type LoadingJob,
  PermanentJobError,
  RetryJobError,
  type SettledRecord,
} from './jobs.js';
export { type JobRunnerOptions, pruneFinishedJobs, runDueJobs, startJobWorker } from './runner.js';
export { JOB_STATUSES, type JobStatus, jobs } from './tables.js';
