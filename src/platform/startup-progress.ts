// One line of progress for each start-up step that takes over a second, so a slow start is never silent.

const SLOW_MS = 1_000;

/** Runs a start-up step; announces it once it has taken a second, and says how long it took. */
export async function startupStep<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const announce = setTimeout(() => console.log(`  ${label}…`), SLOW_MS);
  try {
    return await fn();
  } finally {
    clearTimeout(announce);
    const ms = Date.now() - started;
    if (ms >= SLOW_MS) console.log(`  ${label}: done in ${(ms / 1000).toFixed(1)} s`);
  }
}
