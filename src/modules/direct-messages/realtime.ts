import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { RequestContext } from '../../platform/context.js';
import type { Database } from '../../platform/db/client.js';
import { lastEventId, openSseStream, RealtimeHub, sseEvent } from '../../platform/realtime/sse.js';
import type { AppDeps } from '../../platform/types.js';
import { DM_CHANNEL, type DmNotification } from './repository.js';
import * as service from './service.js';

const CATCH_UP_BATCH = 200;

/** One per app instance: the DM channel's notices, keyed by workspace and thread. */
export class DmRealtimeHub extends RealtimeHub<DmNotification> {
  constructor(database: Database, log: FastifyBaseLogger) {
    super(database, log, DM_CHANNEL, (notice) => `${notice.w}/${notice.t}`);
  }
}

/**
 * Serves `GET /direct-messages/:threadId/events`. Participation is checked before the response
 * is hijacked, so a stranger gets an ordinary 404 problem. Message events carry the message id
 * as `id:`, so `Last-Event-ID` resumes after it; receipt events carry no id (they are state, and
 * every (re)connection starts with a snapshot of all receipts).
 */
export async function streamThreadEvents(
  deps: AppDeps,
  hub: DmRealtimeHub,
  ctx: RequestContext,
  threadId: string,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  let lastSeq = await service.openStream(deps, ctx, threadId, lastEventId(request));
  await hub.ensureListening();
  const stream = openSseStream(deps, hub, request, reply);

  // Serialised catch-up: any number of notices while a load runs cause exactly one more load.
  let running = false;
  let again = false;
  const catchUp = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        const batch = await service.messagesSince(deps, ctx, threadId, lastSeq, CATCH_UP_BATCH);
        if (batch === null) {
          stream.end();
          return;
        }
        if (!(await stream.stillValid())) return;
        for (const { seq, message } of batch) {
          stream.write(sseEvent('message.created', message, message.id));
          lastSeq = seq;
        }
        if (batch.length === CATCH_UP_BATCH) again = true;
      } while (again && !stream.closed);
    } catch (err) {
      request.log.warn({ err }, 'direct-messages stream catch-up failed');
    } finally {
      running = false;
    }
  };
  const sendReceipts = async (userId?: string) => {
    try {
      const receipts = await service.receiptsOf(deps, ctx, threadId, userId);
      if (!(await stream.stillValid())) return;
      for (const receipt of receipts) stream.write(sseEvent('receipt.updated', receipt));
    } catch (err) {
      request.log.warn({ err }, 'direct-messages stream receipt load failed');
    }
  };

  stream.onClose(
    hub.subscribe(`${ctx.workspaceId}/${threadId}`, (notice) => {
      if (notice.k === 'm') void catchUp();
      else if (notice.k === 'r' && notice.u) void sendReceipts(notice.u);
    }),
  );
  await sendReceipts();
  // Anything committed after openStream read the position (and before we subscribed) arrives here.
  await catchUp();
}
