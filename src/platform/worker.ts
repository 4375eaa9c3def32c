import type { FastifyBaseLogger } from 'fastify';
import type { Database } from './db/client.js';

export interface PollingWorkerOptions {
  name: string;
  database: Database;
  log: FastifyBaseLogger;
  /** Fallback poll interval when no NOTIFY arrives. */
  pollMs: number;
  /** NOTIFY channel that wakes the worker early. */
  channel?: string;
  /** Wake only for the notifications whose payload this accepts (default: every one). */
  accepts?: (payload: string) => boolean;
  /** Does one batch; returns how many items it handled (0 → sleep until woken or polled). */
  runOnce: () => Promise<number>;
}

export interface Worker {
  name: string;
  wake(): void;
  /** Finishes the batch in flight, then stops. */
  stop(): Promise<void>;
}

/** A loop that drains work, then sleeps until NOTIFY or the poll interval; errors never kill it. */
export async function startPollingWorker(options: PollingWorkerOptions): Promise<Worker> {
  let stopped = false;
  let wakeUp: (() => void) | undefined;
  let pendingWake = false;
  const unlisten = options.channel
    ? await options.database.listen(options.channel, (payload) => {
        if (!options.accepts || options.accepts(payload)) worker.wake();
      })
    : async () => undefined;

  const sleep = () =>
    new Promise<void>((resolve) => {
      if (pendingWake) {
        pendingWake = false;
        resolve();
        return;
      }
      const timer = setTimeout(done, options.pollMs);
      function done() {
        clearTimeout(timer);
        wakeUp = undefined;
        resolve();
      }
      wakeUp = done;
    });

  const loop = (async () => {
    while (!stopped) {
      let handled = 0;
      try {
        handled = await options.runOnce();
      } catch (err) {
        options.log.error({ err, worker: options.name }, 'worker batch failed');
      }
      if (!stopped && handled === 0) await sleep();
    }
  })();

  const worker: Worker = {
    name: options.name,
    wake() {
      if (wakeUp) wakeUp();
      else pendingWake = true;
    },
    async stop() {
      stopped = true;
      wakeUp?.();
      await loop;
      await unlisten();
    },
  };
  return worker;
}
