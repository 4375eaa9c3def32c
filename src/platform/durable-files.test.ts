import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { flushTree, writeFileDurably } from './durable-files.js';

const dir = mkdtempSync(join(tmpdir(), 'atrium-durable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('files on the disk', () => {
  it('writes a file whole: flushed, renamed into place, then its folder flushed', () => {
    const file = join(dir, 'encryption.key');
    const flushed: string[] = [];
    writeFileDurably(file, 'secret\n', 0o600, () => {
      // What is in place when each flush happens: first only the temporary file, then the key itself.
      flushed.push(readdirSync(dir).sort().join(','));
    });
    expect(flushed).toHaveLength(2);
    expect(flushed[0]).toMatch(/^\.tmp-[0-9a-f]{12}$/);
    expect(flushed[1]).toBe('encryption.key');
    expect(readFileSync(file, 'utf8')).toBe('secret\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('flushes a whole tree, every file and folder', () => {
    const tree = join(dir, 'tree');
    mkdirSync(join(tree, 'a', 'b'), { recursive: true });
    writeFileSync(join(tree, 'a', 'one'), '1');
    writeFileSync(join(tree, 'a', 'b', 'two'), '2');
    let count = 0;
    flushTree(tree, () => {
      count++;
    });
    expect(count).toBe(5); // tree, a, a/one, a/b, a/b/two
  });
});
