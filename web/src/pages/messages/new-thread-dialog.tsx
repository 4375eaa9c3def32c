/** New 1:1 or group conversation: pick colleagues, optionally name the group, write the first message. */
import { useEffect, useId, useRef, useState } from 'react';
import { ErrorNotice, Loading } from '../../components/status.js';
import { AppDialog } from '../../components/ui/dialog.js';
import { Check } from '../../components/ui/form.js';
import type { Me } from '../../session.js';
import { Composer } from './composer.js';
import { useMembers, useSendMessage } from './messages-api.js';

export function NewThreadDialog({
  me,
  onClose,
  onCreated,
}: {
  me: Me;
  onClose: () => void;
  onCreated: (threadId: string) => void;
}) {
  const groupTitleId = useId();
  const members = useMembers();
  const send = useSendMessage();
  const [selected, setSelected] = useState<string[]>([]);
  const [title, setTitle] = useState('');
  const others = (members.data?.items ?? []).filter((m) => m.userId !== me.user.id && m.status === 'active');
  // The dialog opens on its first colleague (as New event opens on its title), once the colleagues are there:
  // Space chooses them, and the first Tab does not land on Close, where Space or Enter would shut the dialog.
  // Not if the focus has moved on meanwhile (the colleagues were still loading).
  const recipients = useRef<HTMLFieldSetElement>(null);
  const listed = others.length > 0;
  useEffect(() => {
    const dialog = recipients.current?.closest('[role="dialog"]');
    if (!listed || !dialog) return;
    const active = document.activeElement;
    if (active === dialog || active === document.body || active === null) {
      recipients.current?.querySelector('input')?.focus();
    }
  }, [listed]);

  const toggle = (userId: string) =>
    setSelected((s) => (s.includes(userId) ? s.filter((id) => id !== userId) : [...s, userId]));

  return (
    <AppDialog title="New message" isOpen onOpenChange={(open) => !open && onClose()} testId="new-thread-dialog">
      <div className="new-thread-body">
        <fieldset className="recipient-picker" ref={recipients}>
          <legend>To</legend>
          {members.isPending ? <Loading label="Loading colleagues…" /> : null}
          {members.isError ? <ErrorNotice error={members.error} /> : null}
          {others.map((m) => (
            <Check
              key={m.userId}
              className="recipient-option"
              isSelected={selected.includes(m.userId)}
              onChange={() => toggle(m.userId)}
              testId="recipient-option"
            >
              <span>{m.name}</span>
              <span className="muted">{m.email ?? (m.role === 'admin' ? 'Admin' : 'Member')}</span>
            </Check>
          ))}
          {members.isSuccess && others.length === 0 ? (
            <p className="muted">No colleagues in this workspace yet.</p>
          ) : null}
        </fieldset>
        {selected.length > 1 ? (
          <div className="field">
            <label htmlFor={groupTitleId}>Group name (optional, for a new group)</label>
            <input id={groupTitleId} value={title} maxLength={200} onChange={(e) => setTitle(e.target.value)} />
          </div>
        ) : null}
        <p className="muted">
          {selected.length === 0
            ? 'Choose one colleague for a direct message, or several for a group.'
            : selected.length === 1
              ? 'Direct message: your existing conversation with this person is reused.'
              : `Group of ${selected.length + 1}: an existing conversation with exactly these people is reused (with its name; the name here is for a new group).`}
        </p>
        {selected.length > 0 ? (
          <Composer
            label="First message"
            pending={send.isPending}
            error={send.error}
            onSend={async (body) => {
              const result = await send.mutateAsync({
                recipients: selected,
                body,
                title: selected.length > 1 && title.trim() ? title.trim() : undefined,
              });
              onCreated(result.threadId);
            }}
          />
        ) : null}
      </div>
    </AppDialog>
  );
}
