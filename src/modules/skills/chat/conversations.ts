// The assistant's conversations, stored per user: the web app lists and resumes them from any
// browser. Each turn runs the same chat as POST /chat, with the stored history as context.
import { and, asc, desc, eq } from 'drizzle-orm';
import type { RequestContext } from '../../../platform/context.js';
import { withTenant } from '../../../platform/db/tenant.js';
import { notFound } from '../../../platform/errors.js';
import { newId } from '../../../platform/ids.js';
import type { AppDeps } from '../../../platform/types.js';
import { assistantConversations, assistantMessages } from '../tables.js';
import { type ChatHooks, runChat } from './chat-service.js';

/** The model sees at most this many earlier turns (the same bound as POST /chat's body). */
const HISTORY_TURNS = 49;
const MAX_CONVERSATIONS_LISTED = 50;

const iso = (d: Date) => d.toISOString();

function ownerOf(ctx: RequestContext): string {
  if (!ctx.userId) throw notFound('Conversation');
  return ctx.userId;
}

export async function listConversations(deps: AppDeps, ctx: RequestContext) {
  const userId = ownerOf(ctx);
  const rows = await withTenant(deps.db, ctx, (tx) =>
    tx
      .select()
      .from(assistantConversations)
      .where(and(eq(assistantConversations.workspaceId, ctx.workspaceId), eq(assistantConversations.userId, userId)))
      .orderBy(desc(assistantConversations.updatedAt))
      .limit(MAX_CONVERSATIONS_LISTED),
  );
  return {
    items: rows.map((r) => ({ id: r.id, title: r.title, createdAt: iso(r.createdAt), updatedAt: iso(r.updatedAt) })),
  };
}

async function requireOwn(deps: AppDeps, ctx: RequestContext, id: string) {
  const userId = ownerOf(ctx);
  const [row] = await withTenant(deps.db, ctx, (tx) =>
    tx
      .select()
      .from(assistantConversations)
      .where(
        and(
          eq(assistantConversations.workspaceId, ctx.workspaceId),
          eq(assistantConversations.id, id),
          eq(assistantConversations.userId, userId),
        ),
      ),
  );
  // Someone else's conversation is as absent as one that never existed.
  if (!row) throw notFound('Conversation');
  return row;
}

async function messagesOf(deps: AppDeps, ctx: RequestContext, id: string) {
  return withTenant(deps.db, ctx, (tx) =>
    tx
      .select()
      .from(assistantMessages)
      .where(and(eq(assistantMessages.workspaceId, ctx.workspaceId), eq(assistantMessages.conversationId, id)))
      .orderBy(asc(assistantMessages.id)),
  );
}

export async function getConversation(deps: AppDeps, ctx: RequestContext, id: string) {
  const row = await requireOwn(deps, ctx, id);
  const messages = await messagesOf(deps, ctx, id);
  return {
    id: row.id,
    title: row.title,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    messages: messages.map((m) => ({
      id: m.id,
      role: m.role,
      content: m.content,
      toolCalls: m.toolCalls,
      offline: m.offlineModel,
      createdAt: iso(m.createdAt),
    })),
  };
}

/**
 * One turn: the stored history plus the new message go to the assistant; both turns are kept. A new
 * conversation is stored with its first turn, so a turn that fails leaves nothing behind.
 */
async function turn(
  deps: AppDeps,
  ctx: RequestContext,
  conversation: { id: string; title: string; isNew: boolean },
  content: string,
  hooks: ChatHooks,
) {
  const history = conversation.isNew ? [] : (await messagesOf(deps, ctx, conversation.id)).slice(-HISTORY_TURNS);
  const answer = await runChat(
    deps,
    ctx,
    [...history.map((m) => ({ role: m.role, content: m.content })), { role: 'user' as const, content }],
    hooks,
  );
  const cards = answer.toolCalls.map((c) => ({ label: c.label, summary: c.summary, outcome: c.outcome }));
  await withTenant(deps.db, ctx, async (tx) => {
    if (conversation.isNew) {
      await tx.insert(assistantConversations).values({
        workspaceId: ctx.workspaceId,
        userId: ownerOf(ctx),
        id: conversation.id,
        title: conversation.title,
      });
    }
    await tx.insert(assistantMessages).values([
      { workspaceId: ctx.workspaceId, id: newId('amsg'), conversationId: conversation.id, role: 'user', content },
      {
        workspaceId: ctx.workspaceId,
        id: newId('amsg'),
        conversationId: conversation.id,
        role: 'assistant',
        content: answer.message.content,
        toolCalls: cards,
        offlineModel: answer.model.offline,
      },
    ]);
    await tx
      .update(assistantConversations)
      .set({ updatedAt: new Date() })
      .where(
        and(eq(assistantConversations.workspaceId, ctx.workspaceId), eq(assistantConversations.id, conversation.id)),
      );
  });
  return { conversation: { id: conversation.id, title: conversation.title }, ...answer };
}

/** Who may converse (a signed-in person) and, for an existing conversation, that it is theirs: 404 otherwise. */
export async function checkConversation(deps: AppDeps, ctx: RequestContext, id?: string): Promise<void> {
  ownerOf(ctx);
  if (id !== undefined) await requireOwn(deps, ctx, id);
}

export async function startConversation(deps: AppDeps, ctx: RequestContext, content: string, hooks: ChatHooks = {}) {
  ownerOf(ctx);
  const conversation = { id: newId('conv'), title: content.replace(/\s+/g, ' ').trim().slice(0, 80), isNew: true };
  return turn(deps, ctx, conversation, content, hooks);
}

export async function continueConversation(
  deps: AppDeps,
  ctx: RequestContext,
  id: string,
  content: string,
  hooks: ChatHooks = {},
) {
  const row = await requireOwn(deps, ctx, id);
  return turn(deps, ctx, { id: row.id, title: row.title, isNew: false }, content, hooks);
}

export async function deleteConversation(deps: AppDeps, ctx: RequestContext, id: string): Promise<void> {
  await requireOwn(deps, ctx, id);
  await withTenant(deps.db, ctx, async (tx) => {
    await tx
      .delete(assistantMessages)
      .where(and(eq(assistantMessages.workspaceId, ctx.workspaceId), eq(assistantMessages.conversationId, id)));
    await tx
      .delete(assistantConversations)
      .where(and(eq(assistantConversations.workspaceId, ctx.workspaceId), eq(assistantConversations.id, id)));
  });
}
