import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// A tiny copy of the repository layout (script, web app, lockfile) so the real script and Vite run on it.
const repo = resolve(import.meta.dirname, '..');
const root = mkdtempSync(join(tmpdir(), 'atrium-web-build-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function write(path: string, text: string) {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), text);
}

const run = () =>
  execFileSync(process.execPath, [join(root, 'scripts/build-web-if-changed.mjs')], { cwd: root, encoding: 'utf8' });

describe('scripts/build-web-if-changed.mjs', () => {
  it('builds on the first run, then only when a source it was built from changes', () => {
    cpSync(join(repo, 'scripts/build-web-if-changed.mjs'), join(root, 'scripts/build-web-if-changed.mjs'));
    symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'));
    write('package-lock.json', '{}');
    write(
      'web/vite.config.ts',
      `import { fileURLToPath } from 'node:url';
export default { root: fileURLToPath(new URL('.', import.meta.url)), build: { outDir: fileURLToPath(new URL('./dist', import.meta.url)), emptyOutDir: true } };`,
    );
    write('web/index.html', '<!doctype html><script type="module" src="/src/main.ts"></script>');
    write('web/src/main.ts', "import { greeting } from './greeting';\ndocument.title = greeting;");
    write('web/src/greeting.ts', "export const greeting = 'hello';");

    expect(run()).toContain('Building the web app (first start)');
    expect(run()).toBe('');
    write('web/src/unused.ts', 'export const unused = 1;'); // imported by nothing: no rebuild
    expect(run()).toBe('');
    write('web/src/greeting.ts', "export const greeting = 'hello again';");
    expect(run()).toContain('Building the web app (its sources changed)');
    expect(run()).toBe('');
    write('package-lock.json', '{"changed":true}');
    expect(run()).toContain('sources changed');
  });
});
