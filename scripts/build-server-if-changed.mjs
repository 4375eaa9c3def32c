#!/usr/bin/env node
// Builds what `npm start` runs: the server's TypeScript (src/ and packages/skill-sdk/src/, tests left
// out) transpiled file by file to plain JavaScript in .run/, which mirrors the repository, so every
// path a module takes relative to itself (the migrations, the web app, package.json, a skill's files)
// still resolves: those are copied (non-TypeScript files under the sources) or linked (drizzle/,
// web/, package.json, node_modules/). Plain Node then loads the service without a TypeScript loader
// (about 2 s less to start and no launcher process). Only transpiling: `npm run check` type-checks.
// Rebuilds only when a source, package-lock.json or this script changed (hash in .run/.build-hash);
// `--force` rebuilds anyway. A build is made in a directory of its own (.run.building-<pid>) and put in
// place by renaming, so two builds at once (two `npm start` from one checkout, two test files) never write
// into each other's files: the last to finish wins, and either one's .run/ is whole.
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, '.run');
const stampFile = join(out, '.build-hash');
const SOURCES = ['src', 'packages/skill-sdk/src'];
const LINKS = ['drizzle', 'web', 'package.json', 'node_modules'];
const isTest = (file) => file.endsWith('.test.ts') || file.endsWith('/test-support.ts');

function listSources() {
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (!isTest(path)) files.push(relative(root, path));
    }
  };
  for (const dir of SOURCES) walk(join(root, dir));
  return files.sort();
}

function hashOf(files) {
  const hash = createHash('sha256');
  for (const file of [...files, 'package-lock.json', 'scripts/build-server-if-changed.mjs']) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(root, file)));
  }
  return hash.digest('hex');
}

const files = listSources();
const hash = hashOf(files);
const built = existsSync(stampFile) ? readFileSync(stampFile, 'utf8').trim() : '';
if (!process.argv.includes('--force') && built === hash) process.exit(0);

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
};
// What a build killed halfway left behind (its process is gone).
for (const entry of readdirSync(root)) {
  const left = /^\.run\.(building|old)-(\d+)$/.exec(entry);
  if (left && !alive(Number(left[2]))) rmSync(join(root, entry), { recursive: true, force: true });
}

const started = Date.now();
const building = `${out}.building-${process.pid}`;
rmSync(building, { recursive: true, force: true });
const { build } = await import('esbuild');
await build({
  entryPoints: files.filter((f) => f.endsWith('.ts')).map((f) => join(root, f)),
  outdir: building,
  outbase: root,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
});
for (const file of files.filter((f) => !f.endsWith('.ts'))) {
  mkdirSync(dirname(join(building, file)), { recursive: true });
  cpSync(join(root, file), join(building, file));
}
for (const link of LINKS) symlinkSync(join('..', link), join(building, link));
writeFileSync(join(building, '.build-hash'), `${hash}\n`);

// Put it in place: the previous build aside, this one in its place, the previous one deleted. Another
// build finishing between the two renames puts its own in place first; it is as new as this one, so
// this one is dropped.
const old = `${out}.old-${process.pid}`;
// Another build of the same sources is in place already (it finished first): keep it, it may be running.
// (`--force` replaces it anyway: that is what it is for.)
const current = existsSync(stampFile) ? readFileSync(stampFile, 'utf8').trim() : '';
if (current === hash && !process.argv.includes('--force')) {
  rmSync(building, { recursive: true, force: true });
  process.exit(0);
}
try {
  renameSync(out, old);
} catch (error) {
  if (error.code !== 'ENOENT') throw error;
}
try {
  renameSync(building, out);
} catch (error) {
  if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
  rmSync(building, { recursive: true, force: true });
}
rmSync(old, { recursive: true, force: true });
const seconds = (Date.now() - started) / 1000;
if (seconds >= 1) console.log(`  Server built in ${seconds.toFixed(1)} s`);
