/** A message body with `@patient:<id>` tokens shown as patient chips. */
import { Link } from '@tanstack/react-router';
import { type Mention, splitMentions } from './messages-api.js';

export function PatientChip({ patientId, name }: { patientId: string; name: string | null }) {
  return (
    <Link to="/patients/$patientId" params={{ patientId }} className="patient-chip" data-testid="patient-chip">
      <span aria-hidden="true">@</span>
      {name ?? 'Unknown patient'}
    </Link>
  );
}

export function MessageBody({ body, mentions }: { body: string; mentions: Mention[] }) {
  const names = new Map(mentions.map((m) => [m.patientId, m.displayName]));
  return (
    <p className="message-body">
      {splitMentions(body).map((part, i) =>
        'text' in part ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: parts are positional and never reordered
          <span key={i}>{part.text}</span>
        ) : (
          // biome-ignore lint/suspicious/noArrayIndexKey: parts are positional and never reordered
          <PatientChip key={i} patientId={part.patientId} name={names.get(part.patientId) ?? null} />
        ),
      )}
    </p>
  );
}

/** One-line preview for the thread list: mentions become `@Name`. */
export function previewText(body: string, mentions: Mention[]): string {
  const names = new Map(mentions.map((m) => [m.patientId, m.displayName]));
  return splitMentions(body)
    .map((part) => ('text' in part ? part.text : `@${names.get(part.patientId) ?? 'patient'}`))
    .join('')
    .replace(/\s+/g, ' ')
    .slice(0, 140);
}
