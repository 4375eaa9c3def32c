/**
 * Message composer. Typing `@` at the start of a word (or the @ Patient button) opens a patient picker
 * (React Aria Autocomplete over `GET /patients?q=`). The draft shows the chosen patient as `@Given Family`;
 * on sending, each such name becomes the `@patient:<id>` token the server resolves, so people never see ids.
 */
import { type FormEvent, type KeyboardEvent, useEffect, useId, useRef, useState } from 'react';
import { Autocomplete, Dialog, Input, Menu, MenuItem, Popover, SearchField } from 'react-aria-components';
import { ApiError, describeError } from '../../api.js';
import { Button } from '../../components/ui/button.js';
import { plainMessage } from '../../components/ui/form.js';
import { useTouchFirst } from '../../components/use-phone.js';
import { sending, useDraft } from '../../drafts.js';
import { PatientOption, usePatientSearchAsTyped } from '../patients/patient-picker.js';
import { PatientChip } from './message-body.js';

interface DraftMention {
  id: string;
  name: string;
}

/** The body as sent: every `@Name` of a chosen patient becomes `@patient:<id>` (longest names first). */
export function toWireBody(body: string, mentions: DraftMention[]): string {
  let out = body;
  for (const m of [...mentions].sort((a, b) => b.name.length - a.name.length)) {
    out = out.split(`@${m.name}`).join(`@patient:${m.id}`);
  }
  return out;
}

/** The server's answer in plain words (field problems come back in zod's English). */
function composerError(error: unknown): string {
  if (error instanceof ApiError && error.errors.length > 0) {
    const message = plainMessage(error.errors[0].message);
    if (/characters or fewer/.test(message)) return `This message is too long. ${message}`;
    if (message === 'Fill this in.') return 'Write a message first.';
    return message;
  }
  return describeError(error);
}

const noText = (text: string) => text === '';
const noMentions = (mentions: DraftMention[]) => mentions.length === 0;

export function Composer({
  onSend,
  pending,
  error,
  label = 'Message',
  arrival,
  onArrivalShown,
  draftKey,
}: {
  onSend: (body: string) => Promise<unknown>;
  pending: boolean;
  error: unknown;
  label?: string;
  /**
   * Set (a new value each time) when a message to this thread was just sent from elsewhere (New message, whose
   * dialog and box are gone): this box takes the focus and says Sent, then `onArrivalShown` clears it.
   */
  arrival?: number;
  onArrivalShown?: () => void;
  /** Where the unsent words are kept while the box is away (a thread's id); without it they are not kept. */
  draftKey?: string;
}) {
  const inputId = useId();
  // Kept while the person reads another thread (`draftKey`), with the patients it mentions.
  const [body, setBody] = useDraft<string>(draftKey ? `${draftKey}:body` : null, '', noText);
  // "Sent", read out politely once a message went; cleared by typing, so the next one is read out again.
  const [sent, setSent] = useState(false);
  const [picking, setPicking] = useState(false);
  const [mentions, setMentions] = useDraft<DraftMention[]>(draftKey ? `${draftKey}:mentions` : null, [], noMentions);
  const textarea = useRef<HTMLTextAreaElement>(null);
  /** Where a typed `@` stood (or the caret when the button opened the picker): the mention goes there. */
  const mentionAt = useRef<number | null>(null);

  const mentioned = mentions.filter((m) => body.includes(`@${m.name}`));

  const openPicker = (at: number) => {
    mentionAt.current = at;
    setPicking(true);
  };

  const closePicker = () => {
    setPicking(false);
    const at = mentionAt.current;
    requestAnimationFrame(() => {
      const el = textarea.current;
      el?.focus();
      if (el && at !== null) el.setSelectionRange(at, at);
    });
  };

  const insertMention = (id: string, name: string) => {
    const el = textarea.current;
    const at = mentionAt.current ?? body.length;
    mentionAt.current = null;
    const before = body.slice(0, at);
    const token = `${before && !/\s$/.test(before) ? ' ' : ''}@${name} `;
    setBody(before + token + body.slice(at));
    setMentions(mentions.some((m) => m.id === id) ? mentions : [...mentions, { id, name }]);
    setPicking(false);
    requestAnimationFrame(() => {
      el?.focus();
      const pos = before.length + token.length;
      el?.setSelectionRange(pos, pos);
    });
  };

  // Arriving from New message. The words go into the status region a moment later: a region that has just
  // appeared (this box may be new) is not read out when its words come with it.
  const sentLater = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(sentLater.current), []);
  useEffect(() => {
    if (arrival === undefined) return;
    textarea.current?.focus();
    setSent(false);
    clearTimeout(sentLater.current);
    sentLater.current = setTimeout(() => setSent(true), 100);
    onArrivalShown?.();
  }, [arrival, onArrivalShown]);

  const submit = async (event?: FormEvent) => {
    event?.preventDefault();
    if (!body.trim() || pending) return;
    setSent(false);
    // The kept draft goes with the send (this thread opened again meanwhile shows an empty box, not a message
    // already on its way), and comes back if it did not go.
    const keptBody = sending(draftKey ? `${draftKey}:body` : null, body);
    const keptMentions = sending(draftKey ? `${draftKey}:mentions` : null, mentions);
    try {
      await onSend(toWireBody(body, mentioned));
      setBody('');
      setMentions([]);
      clearTimeout(sentLater.current);
      setSent(true);
      // Sent with the button: the focus goes back to the box for the next message (nothing left to send).
      const el = textarea.current;
      const active = document.activeElement;
      if (el?.isConnected && (!active || active === document.body || el.form?.contains(active))) el.focus();
    } catch {
      // The error is shown below; the draft stays.
      keptBody.failed();
      keptMentions.failed();
    }
  };

  // A phone's keyboard has no Shift+Enter: there Enter makes a new line and the Send button sends.
  const touchFirst = useTouchFirst();
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !touchFirst) {
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
        placeholder={
          touchFirst
            ? 'Write a message; type @ to mention a patient'
            : 'Write a message; type @ to mention a patient (Enter sends, Shift+Enter: new line)'
        }
        value={body}
        onChange={(e) => {
          const value = e.target.value;
          setSent(false);
          const caret = e.target.selectionStart;
          // Typing "@" at the start of a word opens the patient picker in its place.
          if (
            value.length === body.length + 1 &&
            value[caret - 1] === '@' &&
            (caret === 1 || /\s/.test(value[caret - 2] ?? ''))
          ) {
            setBody(value.slice(0, caret - 1) + value.slice(caret));
            openPicker(caret - 1);
            return;
          }
          setBody(value);
        }}
        onKeyDown={onKeyDown}
        data-testid="composer-input"
      />
      <Popover
        triggerRef={textarea}
        isOpen={picking}
        onOpenChange={(open) => {
          if (!open) closePicker();
        }}
        placement="top start"
        className="popover mention-popover"
      >
        <Dialog aria-label="Mention a patient" className="mention-dialog" data-testid="mention-picker">
          <PatientPicker onPick={insertMention} />
        </Dialog>
      </Popover>
      {mentioned.length > 0 ? (
        <div className="composer-mentions" data-testid="composer-mentions">
          <span className="muted">Mentions:</span>
          {mentioned.map((m) => (
            <PatientChip key={m.id} patientId={m.id} name={m.name} />
          ))}
        </div>
      ) : null}
      {error ? (
        <p className="field-error" role="alert" data-testid="composer-error">
          {composerError(error)}
        </p>
      ) : null}
      <div className="composer-actions">
        <Button
          variant="secondary"
          aria-label="Mention a patient"
          onPress={() => openPicker(textarea.current?.selectionStart ?? body.length)}
          data-testid="mention-patient"
        >
          @ Patient
        </Button>
        <span className="composer-status muted" role="status" data-testid="composer-status">
          {sent ? 'Sent' : ''}
        </span>
        {/* Pending, not disabled, while it sends: a disabled button drops the keyboard focus to the page. */}
        <Button type="submit" isPending={pending} isDisabled={!pending && !body.trim()} data-testid="send-message">
          {pending ? 'Sending…' : 'Send'}
        </Button>
      </div>
    </form>
  );
}

function PatientPicker({ onPick }: { onPick: (id: string, name: string) => void }) {
  const [text, setText] = useState('');
  // A patient chosen from the list for the text typed before is mentioned only if the answer to what is typed
  // holds them too (the same rule as Ctrl+K and the patient picker).
  const search = usePatientSearchAsTyped(text, (p) => onPick(p.id, `${p.givenName} ${p.familyName}`), {
    whenEmpty: true,
  });
  return (
    <Autocomplete inputValue={text} onInputChange={setText}>
      <SearchField aria-label="Find a patient" className="mention-field" autoFocus>
        <Input placeholder="Name or MRN" data-testid="mention-search" />
      </SearchField>
      <Menu
        className="mention-results"
        aria-label="Patients"
        items={search.items}
        onAction={(key) => search.choose(String(key))}
        renderEmptyState={() => (
          <p className="muted mention-empty">{search.results.isFetching ? 'Searching…' : 'No patient matches.'}</p>
        )}
      >
        {(p) => (
          <MenuItem
            id={p.id}
            className="menu-item"
            textValue={`${p.givenName} ${p.familyName}`}
            data-testid="mention-option"
          >
            <PatientOption patient={p} />
          </MenuItem>
        )}
      </Menu>
    </Autocomplete>
  );
}
