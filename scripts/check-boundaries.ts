// The module boundary (docs/architecture.md), checked by `npm run check`:
//  1. code outside a module imports it only through its index.ts (src/modules/<name>/index.ts);
//  2. src/platform imports no module at all (modules register implementations of its interfaces);
//  3. modules do not depend on each other in a cycle (type-only imports count: they couple too).
// Scans src/ (tests beside the code included); test/ and bench/ may reach internals when unavoidable.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export interface Violation {
  rule: 'internal-import' | 'platform-imports-module' | 'module-cycle';
  file: string;
  message: string;
}

const SOURCE = /\.(ts|tsx|mts)$/;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (SOURCE.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The file a relative specifier points at (NodeNext: `./x.js` is `./x.ts`), or undefined. */
function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(m?js|jsx)$/, '');
  for (const candidate of [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, join(base, 'index.ts')]) {
    if (isFile(candidate)) return candidate;
  }
  return undefined;
}

/** `src/modules/<name>/…` → name; the composition root src/modules/index.ts and everything else → undefined. */
function moduleOf(rel: string): string | undefined {
  const parts = rel.split('/');
  return parts[0] === 'src' && parts[1] === 'modules' && parts.length > 3 ? parts[2] : undefined;
}

function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles.map((f) => f.fileName);
}

/** Module cycles: strongly connected components of more than one module (Tarjan). */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const stack: string[] = [];
  const onStack = new Set<string>();
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const found: string[][] = [];
  const visit = (v: string) => {
    indices.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indices.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, indices.get(w) as number));
      }
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!indices.has(v)) visit(v);
  return found;
}

/** Every boundary violation under `root` (the repository: its src/ is scanned). */
export function checkBoundaries(root: string): Violation[] {
  const violations: Violation[] = [];
  const graph = new Map<string, Set<string>>();
  const edgeFiles = new Map<string, string>();
  const src = join(root, 'src');
  for (const file of sourceFiles(src)) {
    const rel = relative(root, file).split(sep).join('/');
    const from = moduleOf(rel);
    for (const specifier of importsOf(file)) {
      const target = resolveImport(file, specifier);
      if (!target) continue;
      const targetRel = relative(root, target).split(sep).join('/');
      const to = moduleOf(targetRel);
      // Platform code imports nothing under src/modules, the composition root (modules/index.ts) included.
      if (rel.startsWith('src/platform/') && targetRel.startsWith('src/modules/')) {
        violations.push({
          rule: 'platform-imports-module',
          file: rel,
          message: `${rel} imports ${targetRel}: platform code imports no module (define an interface the module registers)`,
        });
        continue;
      }
      if (!to || to === from) continue;
      if (targetRel !== `src/modules/${to}/index.ts`) {
        violations.push({
          rule: 'internal-import',
          file: rel,
          message: `${rel} imports ${targetRel}: import src/modules/${to}/index.ts instead (export what you need there)`,
        });
      }
      if (from) {
        if (!graph.has(from)) graph.set(from, new Set());
        graph.get(from)?.add(to);
        if (!edgeFiles.has(`${from}>${to}`)) edgeFiles.set(`${from}>${to}`, rel);
      }
    }
  }
  for (const component of cycles(graph)) {
    const edges = component.flatMap((a) =>
      component.filter((b) => graph.get(a)?.has(b)).map((b) => `${a} → ${b} (${edgeFiles.get(`${a}>${b}`)})`),
    );
    violations.push({
      rule: 'module-cycle',
      file: `src/modules/{${component.join(',')}}`,
      message: `modules ${component.join(', ')} depend on each other: ${edges.join('; ')}`,
    });
  }
  return violations;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const violations = checkBoundaries(root);
  for (const v of violations) console.error(`boundaries: [${v.rule}] ${v.message}`);
  if (violations.length > 0) {
    console.error(`boundaries: ${violations.length} violation(s); see docs/architecture.md`);
    process.exit(1);
  }
  console.log(
    'boundaries: ok (modules import each other only through index.ts, platform imports no module, no cycles)',
  );
}
