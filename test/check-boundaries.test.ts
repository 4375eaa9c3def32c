import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { checkBoundaries } from '../scripts/check-boundaries.js';

const roots: string[] = [];
function fixture(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'boundaries-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

const clean = {
  'src/app.ts': "import { MODULES } from './modules/index.js';\nexport const m = MODULES;\n",
  'src/modules/index.ts': "export { a } from './a/index.js';\nexport { b } from './b/index.js';\n",
  'src/modules/a/index.ts': "export { a } from './service.js';\n",
  'src/modules/a/service.ts': "import { rows } from './repository.js';\nexport const a = rows;\n",
  'src/modules/a/repository.ts': 'export const rows = 1;\n',
  'src/modules/a/a.test.ts': "import { rows } from './repository.js';\nexport const t = rows;\n",
  'src/modules/b/index.ts': "export const b = 2;\nexport type { A } from './types.js';\n",
  'src/modules/b/types.ts': 'export type A = number;\n',
  'src/modules/b/service.ts': "import { a } from '../a/index.js';\nexport const s = a;\n",
  'src/platform/auth.ts': "import { x } from './x.js';\nexport const y = x;\n",
  'src/platform/x.ts': 'export const x = 1;\n',
};

describe('check-boundaries', () => {
  it('accepts imports through index.ts, a module reaching its own internals, and the composition root', () => {
    expect(checkBoundaries(fixture(clean))).toEqual([]);
  });

  it('refuses an import of another module’s internal file (also type-only, also from tests)', () => {
    const violations = checkBoundaries(
      fixture({
        ...clean,
        'src/modules/b/service.ts': "import { rows } from '../a/repository.js';\nexport const s = rows;\n",
        'src/modules/b/b.test.ts': "import type { X } from '../a/service.js';\nexport type Y = X;\n",
        'src/emulators/e.ts': "import { rows } from '../modules/a/repository.js';\nexport const e = rows;\n",
      }),
    );
    expect(violations.map((v) => [v.rule, v.file])).toEqual([
      ['internal-import', 'src/emulators/e.ts'],
      ['internal-import', 'src/modules/b/b.test.ts'],
      ['internal-import', 'src/modules/b/service.ts'],
    ]);
    expect(violations[2].message).toContain('src/modules/a/index.ts');
  });

  it('refuses platform code importing a module, even its index.ts or the module list', () => {
    const violations = checkBoundaries(
      fixture({
        ...clean,
        'src/platform/auth.ts': "import { a } from '../modules/a/index.js';\nexport const y = a;\n",
        'src/platform/db/schema.ts': "export * from '../../modules/index.js';\n",
      }),
    );
    expect(violations.map((v) => [v.rule, v.file])).toEqual([
      ['platform-imports-module', 'src/platform/auth.ts'],
      ['platform-imports-module', 'src/platform/db/schema.ts'],
    ]);
  });

  it('refuses modules that depend on each other in a cycle, naming the edges', () => {
    const violations = checkBoundaries(
      fixture({
        ...clean,
        'src/modules/a/service.ts': "import type { A } from '../b/index.js';\nexport const a: A = 1;\n",
      }),
    );
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatchObject({ rule: 'module-cycle' });
    expect(violations[0].message).toContain('a → b (src/modules/a/service.ts)');
    expect(violations[0].message).toContain('b → a (src/modules/b/service.ts)');
  });

  it('finds no violation in this repository', () => {
    const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
    expect(checkBoundaries(root).map((v) => v.message)).toEqual([]);
  });
});
