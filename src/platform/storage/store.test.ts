import * as fs from 'node:fs/promises';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { localObjectStore, type StoreFiles } from './store.js';

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

  it('flushes the object to the disk before renaming it into place, then its folder and the parents of folders it made', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'atrium-store-'));
    dirs.push(dir);
    const steps: string[] = [];
    const name = (path: string) =>
      path.includes('.tmp-')
        ? 'temp'
        : path.endsWith('.bin')
          ? 'object'
          : path === dir
            ? 'data dir'
            : `folder ${path.slice(dir.length + 1)}`;
    const recording: StoreFiles = {
      ...fs,
      open: (async (path: string, flags?: string) => {
        const handle = await fs.open(path, flags);
        const target = name(String(path));
        return Object.assign(Object.create(handle), {
          writeFile: async (data: Buffer) => {
            steps.push(`write ${target}`);
            return handle.writeFile(data);
          },
          sync: async () => {
            steps.push(`sync ${target}`);
            return handle.sync();
          },
          close: async () => {
            steps.push(`close ${target}`);
            return handle.close();
          },
        });
      }) as StoreFiles['open'],
      rename: async (from, to) => {
        steps.push(`rename ${name(String(from))} to ${name(String(to))}`);
        return fs.rename(from, to);
      },
    };
    const store = localObjectStore(dir, recording);
    await store.put('a/b.bin', Buffer.from('durable'));
    // The object, then its folder; `objects` and `objects/a` were made for it, so their entries in
    // their parents are flushed too.
    const intoItsFolder = [
      'write temp',
      'sync temp',
      'close temp',
      'rename temp to object',
      'sync folder objects/a',
      'close folder objects/a',
    ];
    expect(steps).toEqual([
      ...intoItsFolder,
      'sync folder objects',
      'close folder objects',
      'sync data dir',
      'close data dir',
    ]);
    expect((await store.get('a/b.bin'))?.toString()).toBe('durable');
    // Into a folder that is already there: only that folder.
    steps.length = 0;
    await store.put('a/c.bin', Buffer.from('again'));
    expect(steps).toEqual(intoItsFolder);
  });
});
