import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { localObjectStore } from './store.js';

const dirs: string[] = [];
afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe('local object store', () => {
  it('writes, reads back and deletes; leaves no temporary files; refuses keys that escape its folder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'atrium-store-'));
    dirs.push(dir);
    const store = localObjectStore(dir);
    await store.put('notes/a.txt', Buffer.from('hello'));
    expect((await store.get('notes/a.txt'))?.toString()).toBe('hello');
    expect(await readdir(join(dir, 'objects', 'notes'))).toEqual(['a.txt']);
    await store.delete('notes/a.txt');
    expect(await store.get('notes/a.txt')).toBeUndefined();
    for (const bad of ['../x', '/etc/passwd', 'a/../../b', '', 'a\u0000b', '.hidden']) {
      await expect(store.put(bad, Buffer.from('x'))).rejects.toThrow(/Not a storage key/);
    }
  });
});
