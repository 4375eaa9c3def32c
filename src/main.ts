import { renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type Config, ConfigError, loadConfig } from './config.js';
import { openDatabase } from './platform/db/client.js';
import { startupStep } from './platform/startup-progress.js';

async function main(): Promise<void> {
  const config = loadConfig();
  // What a start stopped while removing an unfinished demo left (removeEmbeddedDatabase).
  if (!config.databaseUrl)
    rmSync(`${join(config.dataDir, 'pglite')}${UNFINISHED_SUFFIX}`, { recursive: true, force: true });
  // The modules load while the database opens (both take a good part of a second).
  const [
    { buildApp },
    { DEMO_PASSWORD, DEMO_USERS, demoSeedState, isEmpty, lockPublishedPasswords, seedDemo, shouldSeedDemo },
    { startBackground },
    opened,
  ] = await Promise.all([
    import('./app.js'),
    import('./seed.js'),
    import('./workers.js'),
    openDatabase({ databaseUrl: config.databaseUrl, dataDir: join(config.dataDir, 'pglite'), step: startupStep }),
  ]);
  let database = opened;
  let app = await startupStep('Starting the service', () => buildApp({ config, database }));

  // Contract §10: production refuses demo accounts with the published password (a data dir begun in development).
  const locked = config.env === 'production' ? await lockPublishedPasswords(app.atrium) : [];
  // A start stopped while creating the demo (killed, a crash) left part of it. On the embedded database, when it
  // holds nothing else and this start would seed a new one, it goes (the whole data dir's database: the audit
  // log cannot be deleted from) and the demo is created again; anything else is left as it is and said below.
  const demo = await demoSeedState(app);
  const redo = demo.kind === 'unfinished' && demo.onlyDemo && !config.databaseUrl && shouldSeedDemo(config, true);
  if (redo) {
    app.log.warn('an earlier start was stopped while creating the demo organization: creating it again');
    await startupStep('Removing the unfinished demo organization', async () => {
      await app.close();
      await database.close();
      removeEmbeddedDatabase(join(config.dataDir, 'pglite'));
    });
    database = await openDatabase({ dataDir: join(config.dataDir, 'pglite'), step: startupStep });
    app = await startupStep('Starting the service', () => buildApp({ config, database }));
  }
  const seed = shouldSeedDemo(config, await isEmpty(app));
  if (seed) await startupStep('Creating the demo organization', () => seedDemo(app));
  if (seed && !config.databaseUrl) {
    // Seeding touches much of the embedded database's WebAssembly memory, which is never handed back
    // while that instance lives, and leaves garbage on the heap: go on with a fresh instance of the
    // same data, as a restart would, and let the first one go.
    const seeded = app;
    await startupStep('Reopening the embedded database', async () => {
      await seeded.close();
      await database.close();
      database = await openDatabase({ dataDir: join(config.dataDir, 'pglite') });
      app = await buildApp({ config, database });
    });
    // npm start passes --expose-gc: collect the first instance now rather than under some later load.
    (globalThis as { gc?: () => void }).gc?.();
  }

  await app.listen({ port: config.port, host: config.host });
  const background = await startBackground(app);
  const url = app.atrium.selfUrl();
  const lines = [
    '',
    `  Atrium is running at ${url}`,
    `  API docs:        ${url}/docs`,
    `  Database:        ${config.databaseUrl ? 'PostgreSQL server' : `embedded (PGlite) in ${join(config.dataDir, 'pglite')}`}`,
    `  Emulators:       ${config.emulators ? `on (${url}/_emulators/…)` : 'off'}`,
  ];
  // Said on every first start, however fast the seeding was (its progress line shows only past a second).
  if (seed && redo) {
    lines.push(
      '  Demo data:       created again on this start: an earlier start was stopped while creating it, and that',
      '                   unfinished demo (nothing else was in the database) was removed',
    );
  } else if (seed) lines.push('  Demo data:       created on this start');
  const unfinished = demo.kind === 'unfinished' && !redo ? unfinishedDemoLines(config, demo.onlyDemo) : [];
  if (unfinished.length > 0) {
    app.log.warn('the demo organization is unfinished: an earlier start was stopped while creating it');
    lines.push(...unfinished);
  }
  if (config.operatorTokenGenerated)
    lines.push(`  Operator token:  ${config.operatorToken}  (generated, kept in the data dir)`);
  if (seed || (unfinished.length === 0 && config.seedDemo !== false && !config.databaseUrl)) {
    lines.push(`  Demo sign-ins (password for all: ${DEMO_PASSWORD}):`);
    for (const u of DEMO_USERS) lines.push(`    ${u.email.padEnd(28)} ${u.role.padEnd(6)} ${u.workspaces.join(', ')}`);
  }
  if (locked.length > 0) {
    lines.push(
      '  Demo accounts locked: they had the published demo password, which production refuses. Their sessions and',
      '  API tokens are revoked; each can set a new password with a reset link ("Forgot password"):',
      ...locked.map((email) => `    ${email}`),
    );
  }
  console.log(`${lines.join('\n')}\n`);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      app.log.error({ signal }, 'shutdown took over 15 s; exiting');
      process.exit(1);
    }, 15_000);
    force.unref();
    const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
    // Workers stop claiming at once; the jobs already running finish while the server still answers (with
    // emulators on, their providers are this server). One that outlasts the budget is left to its lease:
    // another instance, or this one restarted, runs it again.
    const jobsStopped = background.stop();
    await Promise.race([jobsStopped, wait(8_000)]);
    // Stops accepting, ends event streams, lets in-flight requests finish (answered `Connection: close`) and
    // closes every connection as soon as it has its answer.
    await app.close();
    // The outbound keep-alive pools (platform/upstream, loaded by the modules by now) go too, once their
    // requests in flight are answered.
    const { closeUpstreamPools } = await import('./platform/upstream/index.js');
    await Promise.race([Promise.all([jobsStopped, closeUpstreamPools()]), wait(2_000)]);
    await database.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

const UNFINISHED_SUFFIX = '.unfinished-demo';

/**
 * Deletes the embedded database's folder. Renamed first (one atomic step), so a start stopped halfway never finds
 * half a database where the database belongs: the next start finds none and creates one, and deletes what is left
 * of the renamed folder.
 */
function removeEmbeddedDatabase(dir: string): void {
  const aside = `${dir}${UNFINISHED_SUFFIX}`;
  rmSync(aside, { recursive: true, force: true });
  renameSync(dir, aside);
  rmSync(aside, { recursive: true, force: true });
}

/** The banner's words for a demo left unfinished by an earlier start, which this start does not redo. */
function unfinishedDemoLines(config: Config, onlyDemo: boolean): string[] {
  const first = '  Demo data:       UNFINISHED: an earlier start was stopped while creating the demo organization, so';
  const pad = '                   ';
  const why =
    config.env === 'production'
      ? [`${pad}parts of it are missing. Production never creates the demo: it is left as it is.`]
      : config.seedDemo === false
        ? [
            `${pad}parts of it are missing. ATRIUM_SEED_DEMO is off: it is left as it is.`,
            ...(onlyDemo && !config.databaseUrl
              ? [`${pad}To have the whole demo, start with ATRIUM_SEED_DEMO on: it is then created again.`]
              : []),
          ]
        : config.databaseUrl
          ? [
              `${pad}parts of it are missing (unless another instance is creating it right now). Atrium removes an`,
              `${pad}unfinished demo only from its embedded database, never from a PostgreSQL server's: it is left as`,
              `${pad}it is. To have the whole demo, start on a new empty database (drop and create this one); to use`,
              `${pad}this one as it is, set ATRIUM_SEED_DEMO=off.`,
            ]
          : [
              `${pad}parts of it are missing. The database holds other data too (organizations, accounts or sign-ins`,
              `${pad}besides the demo's), which Atrium never removes: it is left as it is. To have the whole demo,`,
              `${pad}start with another ATRIUM_DATA_DIR.`,
            ];
  return [first, ...why];
}

main().catch((err) => {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error(err);
  process.exit(1);
});
