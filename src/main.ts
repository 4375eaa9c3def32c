import { join } from 'node:path';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './platform/db/client.js';
import { startupStep } from './platform/startup-progress.js';

async function main(): Promise<void> {
  const config = loadConfig();
  // The modules load while the database opens (both take a good part of a second).
  const [
    { buildApp },
    { DEMO_PASSWORD, DEMO_USERS, isEmpty, lockPublishedPasswords, seedDemo, shouldSeedDemo },
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
  if (seed) lines.push('  Demo data:       created on this start');
  if (config.operatorTokenGenerated)
    lines.push(`  Operator token:  ${config.operatorToken}  (generated, kept in the data dir)`);
  if (seed || (config.seedDemo !== false && !config.databaseUrl)) {
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

main().catch((err) => {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error(err);
  process.exit(1);
});
