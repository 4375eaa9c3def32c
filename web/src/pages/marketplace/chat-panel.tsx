/**
 * The assistant: plain-language requests, each tool call shown as a card with its outcome (never a
 * tool name or id), the newest message scrolled into view, and conversations kept per user on the
 * server (a list of past conversations, resumable from any browser).
 */
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { ErrorNotice } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { tooLongWords } from '../../zod-config.js';
import { type ConversationTurn, useConversation, useConversations, useSendToAssistant } from './marketplace-api.js';

const OUTCOME_LABEL = { ok: 'Done', denied: 'Not allowed', error: 'Failed' } as const;

/** The server's limit on one message (`conversationBody` in src/modules/skills/schema.ts), counted trimmed. */
const MAX_MESSAGE = 10_000;

export function ChatPanel() {
  const inputId = useId();
  const conversations = useConversations();
  const [currentId, setCurrentId] = useState<string | null>(null);
  const current = useConversation(currentId);
  const send = useSendToAssistant();
  const [draft, setDraft] = useState('');
  const [pendingText, setPendingText] = useState<string | null>(null);
  const endRef = useRef<HTMLLIElement>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  // Said as soon as the draft is over the limit (a paste, say), not cut short silently nor refused after sending.
  const tooLong = draft.trim().length > MAX_MESSAGE;
  const turns: ConversationTurn[] = currentId ? (current.data?.messages ?? []) : [];

  // Scroll to the newest message whenever one arrives (or the "working" line appears).
  // biome-ignore lint/correctness/useExhaustiveDependencies: the effect runs because these change
  useEffect(() => {
    endRef.current?.scrollIntoView({ block: 'nearest' });
  }, [turns.length, pendingText]);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const content = draft.trim();
    if (tooLong) {
      inputRef.current?.focus();
      return;
    }
    if (!content || send.isPending) return;
    setDraft('');
    setPendingText(content);
    send.mutate(
      { conversationId: currentId, content },
      {
        onSuccess: (answer) => setCurrentId(answer.conversation.id),
        onError: () => setDraft(content),
        onSettled: () => setPendingText(null),
      },
    );
  };

  const items = conversations.data?.items ?? [];
  return (
    <section className="card mk-chat" aria-labelledby={`${inputId}-title`} data-testid="chat-panel">
      <div className="mk-chat-head">
        <h2 id={`${inputId}-title`}>Assistant</h2>
        <div className="mk-chat-actions">
          {items.length > 0 ? (
            <>
              <label htmlFor={`${inputId}-history`} className="visually-hidden">
                Past conversations
              </label>
              <select
                id={`${inputId}-history`}
                value={currentId ?? ''}
                onChange={(e) => setCurrentId(e.target.value || null)}
                data-testid="chat-history"
              >
                <option value="">New conversation</option>
                {items.map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.title}
                  </option>
                ))}
              </select>
            </>
          ) : null}
          <Button variant="secondary" size="small" onPress={() => setCurrentId(null)} data-testid="chat-new">
            New
          </Button>
        </div>
      </div>
      <ol className="mk-turns" aria-live="polite">
        {turns.length === 0 && !pendingText ? (
          <li className="muted mk-hint">
            Ask in your own words: check a patient’s insurance eligibility, suggest billing codes for their last note,
            find a patient by name or MRN (with the skills that do it installed).
          </li>
        ) : null}
        {turns.map((turn) => (
          <li key={turn.id} className={`mk-turn mk-turn-${turn.role}`} data-testid={`chat-${turn.role}`}>
            {turn.role === 'assistant' && turn.offline ? (
              <span className="mk-badge" data-testid="offline-model">
                Offline model
              </span>
            ) : null}
            {turn.toolCalls.length ? (
              <ul className="mk-toolcalls" aria-label="What the assistant did">
                {turn.toolCalls.map((c, i) => (
                  <li
                    // biome-ignore lint/suspicious/noArrayIndexKey: a stored answer's calls never reorder
                    key={i}
                    className={`mk-toolcard mk-outcome-${c.outcome}`}
                    data-testid="tool-call"
                  >
                    <span className="mk-toolcard-label">{c.label}</span>
                    <span className={`status-pill ${c.outcome === 'ok' ? 'status-ok' : 'status-bad'}`}>
                      {OUTCOME_LABEL[c.outcome]}
                    </span>
                    <span className="mk-toolcard-summary">{c.summary}</span>
                  </li>
                ))}
              </ul>
            ) : null}
            <p className="mk-turn-text">{turn.content}</p>
          </li>
        ))}
        {pendingText ? (
          <>
            <li className="mk-turn mk-turn-user">
              <p className="mk-turn-text">{pendingText}</p>
            </li>
            <li className="muted" role="status">
              Working on it…
            </li>
          </>
        ) : null}
        <li ref={endRef} aria-hidden="true" className="mk-end" />
      </ol>
      {send.error ? <ErrorNotice error={send.error} title="The assistant could not answer" /> : null}
      <form onSubmit={submit} className="mk-chat-form">
        <label htmlFor={inputId} className="visually-hidden">
          Message the assistant
        </label>
        <input
          id={inputId}
          ref={inputRef}
          aria-invalid={tooLong || undefined}
          aria-describedby={tooLong ? `${inputId}-too-long` : undefined}
          className="search-input"
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          placeholder="e.g. Check Jane Doe’s insurance"
          data-testid="chat-input"
        />
        <Button type="submit" isDisabled={send.isPending} data-testid="chat-send">
          Send
        </Button>
      </form>
      {tooLong ? (
        <p className="field-error" id={`${inputId}-too-long`} role="alert" data-testid="chat-too-long">
          This message is too long. {tooLongWords(MAX_MESSAGE)}
        </p>
      ) : null}
    </section>
  );
}
