#!/usr/bin/env node
// Builds the web app (web/dist) only when something it is built from changed: every source file the
// last build read (Vite's module graph, which includes the server and SDK files the web app imports),
// web/index.html, the Vite config and package-lock.json. The hash of those files is kept in
// web/dist/.build-hash with the list of files; `--force` rebuilds anyway.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const distDir = join(root, 'web/dist');
const stampFile = join(distDir, '.build-hash');
const ALWAYS = ['web/index.html', 'web/vite.config.ts', 'package-lock.json'];

function hashFiles(files) {
  const hash = createHash('sha256');
  for (const file of [...new Set([...ALWAYS, ...files])].sort()) {
    hash.update(`${file}\0`);
    const path = join(root, file);
    hash.update(existsSync(path) ? readFileSync(path) : 'missing');
  }
  return hash.digest('hex');
}

function readStamp() {
  try {
    const stamp = JSON.parse(readFileSync(stampFile, 'utf8'));
    return existsSync(join(distDir, 'index.html')) && Array.isArray(stamp.files) ? stamp : undefined;
  } catch {
    return undefined;
  }
}

const stamp = readStamp();
if (!process.argv.includes('--force') && stamp && stamp.hash === hashFiles(stamp.files)) process.exit(0);

const started = Date.now();
console.log(stamp ? '  Building the web app (its sources changed)…' : '  Building the web app (first start)…');
const { build } = await import('vite');
const output = await build({ configFile: join(root, 'web/vite.config.ts'), logLevel: 'warn' });
const files = new Set();
for (const result of Array.isArray(output) ? output : [output]) {
  for (const item of result.output ?? []) {
    for (const id of item.type === 'chunk' ? item.moduleIds : []) {
      const path = id.split('?')[0];
      if (path.startsWith('\0') || !path.startsWith(root) || path.includes('/node_modules/')) continue;
      files.add(relative(root, path));
    }
  }
}
writeFileSync(stampFile, JSON.stringify({ hash: hashFiles([...files]), files: [...files].sort() }, null, 1));
console.log(`  Web app built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
