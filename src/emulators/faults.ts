import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { noContent } from '../platform/http-schemas.js';

export interface Fault {
  operation: string;
  status?: number;
  delayMs?: number;
  times: number;
  /** Answered instead of the emulator's usual error body for `status`. */
  body?: unknown;
}

/** Per-emulator queue of injected faults (contract §11): each matching call consumes one. */
export class FaultBook {
  private faults: Fault[] = [];

  add(fault: Fault): void {
    this.faults.push(fault);
  }

  clear(): void {
    this.faults = [];
  }

  /** Takes the next fault for an operation, if any. */
  take(operation: string): Fault | undefined {
    const fault = this.faults.find((f) => f.operation === operation && f.times > 0);
    if (!fault) return undefined;
    fault.times -= 1;
    if (fault.times <= 0) this.faults = this.faults.filter((f) => f !== fault);
    return fault;
  }
}

export const faultBody = z
  .object({
    operation: z.string().min(1).max(100),
    status: z.number().int().min(100).max(599).optional(),
    delayMs: z.number().int().min(0).max(120_000).optional(),
    times: z.number().int().min(1).max(10_000).default(1),
    body: z.unknown().optional(),
  })
  .refine((f) => f.status !== undefined || f.delayMs !== undefined, { message: 'Send status or delayMs' });

/** Mounts POST/DELETE /faults on an emulator's prefix. */
export function registerFaultRoutes(fastify: FastifyInstance, book: FaultBook): void {
  fastify.addHook('onSend', async (request, reply) => {
    // Counted from the call's arrival (Fastify's own start time), like a remote provider's latency.
    const rest = (answerAfterMs.get(request) ?? 0) - reply.elapsedTime;
    if (rest > 0) await sleep(rest);
  });
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.post(
    '/faults',
    {
      schema: {
        tags: ['emulators'],
        summary: 'Inject a fault into the next calls of an operation',
        body: faultBody,
        response: { 201: z.object({ ok: z.literal(true) }) },
      },
    },
    async (request, reply) => {
      book.add(request.body);
      return reply.status(201).send({ ok: true });
    },
  );
  app.delete(
    '/faults',
    { schema: { tags: ['emulators'], summary: 'Clear injected faults', response: { 204: noContent } } },
    async (_request, reply) => {
      book.clear();
      return reply.status(204).send(null);
    },
  );
}

/** Applies a fault before an operation: delays, then answers with the injected status if one is set. */
const answerAfterMs = new WeakMap<FastifyRequest, number>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Takes the next fault of `operation`. With a status, the call fails (after `delayMs`, if given).
 * A delay alone is the provider's latency: given the `request` of a read, the emulator does its work
 * meanwhile and answers `delayMs` after the call arrived (as a remote provider whose answer takes
 * that long); without it, the delay is waited first.
 */
export async function applyFault(
  book: FaultBook,
  operation: string,
  request?: FastifyRequest,
): Promise<Fault | undefined> {
  const fault = book.take(operation);
  if (fault?.delayMs) {
    if (request && !fault.status) answerAfterMs.set(request, fault.delayMs);
    else await sleep(fault.delayMs);
  }
  return fault?.status ? fault : undefined;
}
