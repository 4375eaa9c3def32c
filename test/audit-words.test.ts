// Every administrative action the server writes to the audit log has its own words in the web app: a new action
// would otherwise show as its code turned into words ("Webhooks inbox resolve"), which reads like a bug to an admin.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasActionWords } from '../web/src/pages/admin/audit-words.js';

const root = join(import.meta.dirname, '..', 'src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('audit words', () => {
  it('name every admin action the server audits', () => {
    const actions = new Set<string>();
    for (const file of sources(root)) {
      for (const m of readFileSync(file, 'utf8').matchAll(/\baction: '([a-z_]+(?:\.[a-z_]+)+)'/g)) actions.add(m[1]);
    }
    // The scan finds them at all (it would pass vacuously if the writing changed shape).
    expect(actions.size).toBeGreaterThan(15);
    expect([...actions].filter((a) => !hasActionWords(a)).sort()).toEqual([]);
  });
});
