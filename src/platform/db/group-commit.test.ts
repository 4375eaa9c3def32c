import { describe, expect, it } from 'vitest';
import { groupCommit } from './group-commit.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('groupCommit', () => {
  it('writes a lone item at once, and items that arrive during a write together in the next batch', async () => {
    const batches: number[][] = [];
    let release!: () => void;
    let gate: Promise<void> = new Promise((r) => {
      release = r;
    });
    const gc = groupCommit<number, string>({
      key: () => 'w',
      flush: async (_key, items) => {
        batches.push(items);
        if (batches.length === 1) await gate;
        return items.map((n) => `ok ${n}`);
      },
    });
    const first = gc.submit(1);
    await tick();
    expect(batches).toEqual([[1]]);
    const rest = [2, 3, 4].map((n) => gc.submit(n));
    await tick();
    expect(batches).toHaveLength(1); // waiting for the first write
    release();
    expect(await first).toBe('ok 1');
    expect(await Promise.all(rest)).toEqual(['ok 2', 'ok 3', 'ok 4']);
    expect(batches).toEqual([[1], [2, 3, 4]]);
    expect(gc.stats()).toEqual({ batches: 2, items: 4, largest: 3 });
    gate = Promise.resolve();
  });

  it('keeps keys apart: one key’s slow batch does not hold another key', async () => {
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const gc = groupCommit<{ k: string }, string>({
      key: (i) => i.k,
      flush: async (key, items) => {
        seen.push(key);
        if (key === 'slow') await gate;
        return items.map(() => key);
      },
    });
    const slow = gc.submit({ k: 'slow' });
    expect(await gc.submit({ k: 'fast' })).toBe('fast');
    release();
    expect(await slow).toBe('slow');
    expect(seen).toEqual(['slow', 'fast']);
  });

  it('retries each item of a failed batch alone, so only the bad one fails', async () => {
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const gc = groupCommit<number, number>({
      key: () => 'w',
      flush: async (_key, items) => {
        calls += 1;
        if (calls === 1) await gate;
        if (items.includes(13)) throw new Error('bad item');
        return items.map((n) => n * 2);
      },
    });
    const first = gc.submit(1);
    const results = [10, 13, 20].map((n) =>
      gc.submit(n).then(
        (v) => ({ ok: v }),
        (e: Error) => ({ error: e.message }),
      ),
    );
    release();
    expect(await first).toBe(2);
    expect(await Promise.all(results)).toEqual([{ ok: 20 }, { error: 'bad item' }, { ok: 40 }]);
  });

  it('splits a long queue into batches of at most maxBatch', async () => {
    const sizes: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const gc = groupCommit<number, number>({
      key: () => 'w',
      maxBatch: 4,
      flush: async (_key, items) => {
        sizes.push(items.length);
        if (sizes.length === 1) await gate;
        return items;
      },
    });
    const all = Array.from({ length: 11 }, (_, i) => gc.submit(i));
    release();
    expect(await Promise.all(all)).toEqual(Array.from({ length: 11 }, (_, i) => i));
    expect(sizes).toEqual([1, 4, 4, 2]);
  });

  it('refuses a flush that answers the wrong number of results (each caller gets the error)', async () => {
    const gc = groupCommit<number, number>({ key: () => 'w', flush: async () => [] });
    await expect(gc.submit(1)).rejects.toThrow(/one result per item/);
  });
});
