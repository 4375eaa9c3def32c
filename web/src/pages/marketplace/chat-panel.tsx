/**
 * The assistant: plain-language requests, each tool call shown as a card with its outcome (never a
 * tool name or id), the newest message scrolled into view, and conversations kept per user in this
 * browser (a list of past conversations, resumable).
 */
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { ErrorNotice } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { useCurrentMe } from '../../me-context.js';
import { type ChatAnswer, useChat } from './marketplace-api.js';

interface Turn {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  offline?: boolean;
  calls?: Pick<ChatAnswer['toolCalls'][number], 'label' | 'summary' | 'outcome'>[];
}

interface Conversation {
  id: string;
  title: string;
  updatedAt: string;
  turns: Turn[];
}

const MAX_CONVERSATIONS = 20;
const newId = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

/** Conversations of this user in this workspace, kept in localStorage (no PHI leaves this browser's profile). */
function useConversations(storageKey: string) {
  const [all, setAll] = useState<Conversation[]>(() => {
    try {
      const parsed = JSON.parse(localStorage.getItem(storageKey) ?? '[]') as Conversation[];
      return Array.isArray(parsed) ? parsed : [];
    } catch {
      return [];
    }
  });
  useEffect(() => {
    try {
      localStorage.setItem(storageKey, JSON.stringify(all.slice(0, MAX_CONVERSATIONS)));
    } catch {
      // Storage full or disabled: the conversation still works, it is only not kept.
    }
  }, [all, storageKey]);
  return [all, setAll] as const;
}

const OUTCOME_LABEL = { ok: 'Done', denied: 'Not allowed', error: 'Failed' } as const;

export function ChatPanel() {
  const me = useCurrentMe();
  const inputId = useId();
  const chat = useChat();
  const [conversations, setConversations] = useConversations(`atrium.assistant.${me.workspace.id}.${me.user.id}`);
  const [currentId, setCurrentId] = useState<string | null>(null);
  const [draft, setDraft] = useState('');
  const endRef = useRef<HTMLLIElement>(null);
  const current = conversations.find((c) => c.id === currentId) ?? null;
  const turns = current?.turns ?? [];

  // Scroll to the newest message whenever one arrives (or the "working" line appears).
  // biome-ignore lint/correctness/useExhaustiveDependencies: the effect runs because these change
  useEffect(() => {
    endRef.current?.scrollIntoView({ block: 'nearest' });
  }, [turns.length, chat.isPending]);

  const update = (id: string, change: (c: Conversation) => Conversation) =>
    setConversations((prev) => {
      const found = prev.find((c) => c.id === id);
      if (!found) return prev;
      return [change(found), ...prev.filter((c) => c.id !== id)];
    });

  const send = (e: FormEvent) => {
    e.preventDefault();
    const content = draft.trim();
    if (!content || chat.isPending) return;
    const userTurn: Turn = { id: newId(), role: 'user', content };
    let id = current?.id;
    if (!id) {
      id = newId();
      const created: Conversation = {
        id,
        title: content.slice(0, 60),
        updatedAt: new Date().toISOString(),
        turns: [],
      };
      setConversations((prev) => [created, ...prev].slice(0, MAX_CONVERSATIONS));
      setCurrentId(id);
    }
    const conversationId = id;
    const history = [...turns, userTurn];
    update(conversationId, (c) => ({ ...c, turns: [...c.turns, userTurn], updatedAt: new Date().toISOString() }));
    setDraft('');
    chat.mutate(
      history.slice(-50).map(({ role, content: text }) => ({ role, content: text })),
      {
        onSuccess: (answer) => {
          const reply: Turn = {
            id: newId(),
            role: 'assistant',
            content: answer.message.content,
            offline: answer.model.offline,
            calls: answer.toolCalls.map(({ label, summary, outcome }) => ({ label, summary, outcome })),
          };
          update(conversationId, (c) => ({ ...c, turns: [...c.turns, reply], updatedAt: new Date().toISOString() }));
        },
      },
    );
  };

  return (
    <section className="card mk-chat" aria-labelledby={`${inputId}-title`} data-testid="chat-panel">
      <div className="mk-chat-head">
        <h2 id={`${inputId}-title`}>Assistant</h2>
        <div className="mk-chat-actions">
          {conversations.length > 0 ? (
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
                {conversations.map((c) => (
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
        {turns.length === 0 ? (
          <li className="muted mk-hint">
            Ask in your own words, for example “Check Eleanor Vance's insurance eligibility” or “Suggest billing codes
            for her last note”.
          </li>
        ) : null}
        {turns.map((turn) => (
          <li key={turn.id} className={`mk-turn mk-turn-${turn.role}`} data-testid={`chat-${turn.role}`}>
            {turn.offline ? (
              <span className="mk-badge" data-testid="offline-model">
                Offline model
              </span>
            ) : null}
            {turn.calls?.length ? (
              <ul className="mk-toolcalls" aria-label="What the assistant did">
                {turn.calls.map((c, n) => (
                  <li
                    // biome-ignore lint/suspicious/noArrayIndexKey: a saved answer's calls never reorder
                    key={n}
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
        {chat.isPending ? (
          <li className="muted" role="status">
            Working on it…
          </li>
        ) : null}
        <li ref={endRef} aria-hidden="true" className="mk-end" />
      </ol>
      {chat.error ? <ErrorNotice error={chat.error} title="The assistant could not answer" /> : null}
      <form onSubmit={send} className="mk-chat-form">
        <label htmlFor={inputId} className="visually-hidden">
          Message the assistant
        </label>
        <input
          id={inputId}
          className="search-input"
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          placeholder="e.g. Check Eleanor Vance's insurance eligibility"
          data-testid="chat-input"
        />
        <Button type="submit" isDisabled={chat.isPending} data-testid="chat-send">
          Send
        </Button>
      </form>
    </section>
  );
}
