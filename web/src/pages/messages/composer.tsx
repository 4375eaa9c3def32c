/** Message composer: typing `@` (or the @ Patient button) opens a patient picker that inserts `@patient:<id>` tokens, shown as names. */
import { type FormEvent, type KeyboardEvent, useId, useRef, useState } from 'react';
import { describeError } from '../../api.js';
import { PatientChip } from './message-body.js';
import { splitMentions, usePatientSearch } from './messages-api.js';

export function Composer({
  onSend,
  pending,
  error,
  label = 'Message',
}: {
  onSend: (body: string) => Promise<unknown>;
  pending: boolean;
  error: unknown;
  label?: string;
}) {
  const inputId = useId();
  const [body, setBody] = useState('');
  const [picking, setPicking] = useState(false);
  const [query, setQuery] = useState('');
  const [names, setNames] = useState<Map<string, string>>(new Map());
  const textarea = useRef<HTMLTextAreaElement>(null);
  /** Where a typed `@` stood: the mention goes there. */
  const mentionAt = useRef<number | null>(null);
  const patients = usePatientSearch(query.trim(), picking);

  const mentioned = [...new Set(splitMentions(body).flatMap((p) => ('patientId' in p ? [p.patientId] : [])))];

  const insertMention = (id: string, name: string) => {
    const el = textarea.current;
    const at = mentionAt.current ?? (el ? el.selectionStart : body.length);
    mentionAt.current = null;
    const before = body.slice(0, at);
    const token = `${before && !/\s$/.test(before) ? ' ' : ''}@patient:${id} `;
    setBody(before + token + body.slice(at));
    setNames((m) => new Map(m).set(id, name));
    setPicking(false);
    setQuery('');
    requestAnimationFrame(() => {
      el?.focus();
      const pos = before.length + token.length;
      el?.setSelectionRange(pos, pos);
    });
  };

  const submit = async (event?: FormEvent) => {
    event?.preventDefault();
    if (!body.trim() || pending) return;
    try {
      await onSend(body);
      setBody('');
    } catch {
      // The error is shown below; the draft stays.
    }
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      void submit();
    }
  };

  return (
    <form className="composer" onSubmit={submit} data-testid="composer">
      <label htmlFor={inputId} className="visually-hidden">
        {label}
      </label>
      <textarea
        id={inputId}
        ref={textarea}
        rows={3}
        maxLength={10_000}
        placeholder="Write a message — Enter sends, Shift+Enter adds a line"
        value={body}
        onChange={(e) => {
          const value = e.target.value;
          const caret = e.target.selectionStart;
          // Typing "@" at the start of a word opens the patient picker in its place.
          if (
            value.length === body.length + 1 &&
            value[caret - 1] === '@' &&
            (caret === 1 || /\s/.test(value[caret - 2] ?? ''))
          ) {
            mentionAt.current = caret - 1;
            setBody(value.slice(0, caret - 1) + value.slice(caret));
            setPicking(true);
            return;
          }
          setBody(value);
        }}
        onKeyDown={onKeyDown}
        data-testid="composer-input"
      />
      {mentioned.length > 0 ? (
        <div className="composer-mentions" data-testid="composer-mentions">
          <span className="muted">Mentions:</span>
          {mentioned.map((id) => (
            <PatientChip key={id} patientId={id} name={names.get(id) ?? id} />
          ))}
        </div>
      ) : null}
      {error ? (
        <p className="field-error" role="alert" data-testid="composer-error">
          {describeError(error)}
        </p>
      ) : null}
      <div className="composer-actions">
        <div className="mention-picker">
          <button
            type="button"
            className="button button-secondary"
            onClick={() => setPicking((v) => !v)}
            aria-expanded={picking}
            data-testid="mention-patient"
          >
            @ Patient
          </button>
          {picking ? (
            <div
              className="mention-popover card"
              role="dialog"
              aria-label="Mention a patient"
              onKeyDown={(e) => {
                if (e.key !== 'Escape') return;
                e.stopPropagation();
                setPicking(false);
                textarea.current?.focus();
              }}
            >
              <input
                type="search"
                placeholder="Find patient by name or MRN"
                aria-label="Find patient"
                value={query}
                onChange={(e) => setQuery(e.target.value)}
                // biome-ignore lint/a11y/noAutofocus: the picker opens to type into it
                autoFocus
                data-testid="mention-search"
              />
              <ul className="mention-results">
                {patients.data?.items.map((p) => (
                  <li key={p.id}>
                    <button
                      type="button"
                      className="button-link"
                      onClick={() => insertMention(p.id, `${p.givenName} ${p.familyName}`)}
                      data-testid="mention-option"
                    >
                      {p.givenName} {p.familyName}
                      {p.mrn ? <span className="muted"> · {p.mrn}</span> : null}
                    </button>
                  </li>
                ))}
                {patients.data && patients.data.items.length === 0 ? (
                  <li className="muted">No patients found</li>
                ) : null}
              </ul>
            </div>
          ) : null}
        </div>
        <button
          type="submit"
          className="button button-primary"
          disabled={pending || !body.trim()}
          data-testid="send-message"
        >
          {pending ? 'Sending…' : 'Send'}
        </button>
      </div>
    </form>
  );
}
