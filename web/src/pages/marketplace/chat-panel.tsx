/** A small assistant chat that shows which tools each answer called (and their outcome). */
import { type FormEvent, useId, useState } from 'react';
import { ErrorNotice } from '../../components/status.js';
import { type ChatAnswer, useChat } from './marketplace-api.js';

interface Turn {
  id: number;
  role: 'user' | 'assistant';
  content: string;
  answer?: ChatAnswer;
  /** Tool calls with stable keys (a transcript only grows). */
  calls?: (ChatAnswer['toolCalls'][number] & { key: string })[];
}

let nextTurnId = 1;

export function ChatPanel() {
  const inputId = useId();
  const chat = useChat();
  const [turns, setTurns] = useState<Turn[]>([]);
  const [draft, setDraft] = useState('');

  const send = (e: FormEvent) => {
    e.preventDefault();
    const content = draft.trim();
    if (!content) return;
    const history = [...turns, { id: nextTurnId++, role: 'user' as const, content }];
    setTurns(history);
    setDraft('');
    chat.mutate(
      history.map(({ role, content: c }) => ({ role, content: c })),
      {
        onSuccess: (answer) => {
          const id = nextTurnId++;
          const calls = answer.toolCalls.map((c, n) => ({ ...c, key: `${id}.${n}` }));
          setTurns((prev) => [...prev, { id, role: 'assistant', content: answer.message.content, answer, calls }]);
        },
      },
    );
  };

  return (
    <section className="card mk-chat" aria-labelledby={`${inputId}-title`} data-testid="chat-panel">
      <h2 id={`${inputId}-title`}>Assistant</h2>
      <ol className="mk-turns">
        {turns.map((turn) => (
          <li key={turn.id} className={`mk-turn mk-turn-${turn.role}`} data-testid={`chat-${turn.role}`}>
            {turn.answer?.model.offline ? (
              <span className="mk-badge" data-testid="offline-model">
                Offline model
              </span>
            ) : null}
            <p className="mk-turn-text">{turn.content}</p>
            {turn.calls?.length ? (
              <ul className="mk-toolcalls" aria-label="Tools called">
                {turn.calls.map((c) => (
                  <li key={c.key} data-testid="tool-call">
                    <code>
                      {c.slug} › {c.tool}
                    </code>{' '}
                    <span className={`mk-outcome mk-outcome-${c.outcome}`}>{c.outcome}</span>
                  </li>
                ))}
              </ul>
            ) : null}
          </li>
        ))}
        {chat.isPending ? <li className="muted">Thinking…</li> : null}
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
          placeholder="e.g. Suggest billing codes: follow-up visit for hypertension"
          data-testid="chat-input"
        />
        <button type="submit" className="button button-primary" disabled={chat.isPending} data-testid="chat-send">
          Send
        </button>
      </form>
    </section>
  );
}
