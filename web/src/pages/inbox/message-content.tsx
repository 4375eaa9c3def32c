/**
 * A channel message's words and attachments as the inbox shows them: a voice note says "Voice message",
 * a video "Video", a file its name; an attachment with a link opens it in a new tab. Nothing is fetched.
 */
import { attachmentLabel } from '../../../../src/modules/channels/providers/content.js';
import type { InboxMessage } from './inbox-api.js';

const ICON: Record<string, string> = {
  Photo: '🖼',
  Video: '🎬',
  'Video message': '🎬',
  Audio: '🎵',
  'Voice message': '🎤',
  Sticker: '🏷',
  GIF: '🎞',
  File: '📄',
  Location: '📍',
};

/** Kinds whose name (a file name, a track title) says more than the kind; a photo's "name" is a provider id. */
const NAMED = new Set(['file', 'document', 'audio']);

export function attachmentText(a: InboxMessage['attachments'][number]): string {
  const label = attachmentLabel(a.type);
  return NAMED.has(a.type) && a.name ? `${label}: ${a.name}` : label;
}

export function MessageContent({ message }: { message: InboxMessage }) {
  return (
    <>
      {message.text ? <p className="message-body">{message.text}</p> : null}
      {message.attachments.length ? (
        <ul className="message-attachments" data-testid="message-attachments">
          {message.attachments.map((a, i) => {
            const label = attachmentLabel(a.type);
            const text = attachmentText(a);
            return (
              // biome-ignore lint/suspicious/noArrayIndexKey: a message's attachments never change order
              <li key={i} data-testid="message-attachment" data-kind={a.type}>
                <span aria-hidden="true">{ICON[label] ?? '📎'} </span>
                {a.url ? (
                  <a href={a.url} target="_blank" rel="noreferrer">
                    {text}
                  </a>
                ) : (
                  <span>{text}</span>
                )}
              </li>
            );
          })}
        </ul>
      ) : null}
    </>
  );
}
