/**
 * Group commit: many callers' writes in one transaction, each caller answered only after that
 * transaction committed.
 *
 * `submit(item)` queues the item under its key (e.g. the workspace). While no batch of that key is
 * being written, the queue is flushed at once; while one is, new items wait and go together in the
 * next. Under load the batches grow by themselves, and with one caller a batch is that one item, so
 * nothing waits on a timer. Batches of one key never overlap, so two batches cannot lock the same
 * rows in opposite orders; different keys run side by side.
 *
 * `flush(items)` returns one result per item, in order. When a whole batch fails, each of its items
 * is tried again alone, so one bad item fails only its own caller.
 */
export interface GroupCommit<T, R> {
  submit(item: T): Promise<R>;
  /** Batches written so far and the items in them (for the benchmark and tests). */
  stats(): { batches: number; items: number; largest: number };
}

interface Waiting<T, R> {
  item: T;
  resolve: (value: R) => void;
  reject: (reason: unknown) => void;
}

export function groupCommit<T, R>(options: {
  key: (item: T) => string;
  flush: (key: string, items: T[]) => Promise<R[]>;
  /** Most items in one batch (default 256). */
  maxBatch?: number;
}): GroupCommit<T, R> {
  const maxBatch = options.maxBatch ?? 256;
  const queues = new Map<string, Waiting<T, R>[]>();
  const busy = new Set<string>();
  const counts = { batches: 0, items: 0, largest: 0 };

  async function write(key: string, batch: Waiting<T, R>[]): Promise<void> {
    counts.batches += 1;
    counts.items += batch.length;
    counts.largest = Math.max(counts.largest, batch.length);
    try {
      const results = await options.flush(
        key,
        batch.map((w) => w.item),
      );
      if (results.length !== batch.length) throw new Error('group commit: one result per item expected');
      for (const [i, w] of batch.entries()) w.resolve(results[i]);
    } catch (err) {
      if (batch.length === 1) {
        batch[0].reject(err);
        return;
      }
      // One item may be what failed the batch: each is tried alone, so only its own caller fails.
      for (const w of batch) await write(key, [w]);
    }
  }

  async function drain(key: string): Promise<void> {
    busy.add(key);
    try {
      for (;;) {
        const queue = queues.get(key);
        if (!queue || queue.length === 0) break;
        const batch = queue.splice(0, maxBatch);
        await write(key, batch);
      }
    } finally {
      queues.delete(key);
      busy.delete(key);
    }
  }

  return {
    submit(item) {
      const key = options.key(item);
      return new Promise<R>((resolve, reject) => {
        const queue = queues.get(key) ?? [];
        queue.push({ item, resolve, reject });
        queues.set(key, queue);
        if (!busy.has(key)) void drain(key);
      });
    },
    stats: () => ({ ...counts }),
  };
}
