// What a message that is not plain text says, in words a receptionist reads at a glance: a shared place,
// a contact card, a message kind we cannot show, and each attachment kind's name. Imports nothing at
// run time: the web app's inbox uses the same names.

/** A message of a kind we cannot show (WhatsApp `unsupported`, a Telegram poll): never an empty bubble. */
export const UNSUPPORTED_TEXT = '[Unsupported message type]';

const coordinate = (value: number) => (Number.isFinite(value) ? String(Math.round(value * 1e5) / 1e5) : '?');

/** A shared location as text: `📍 Location: 52.52, 13.405 — Name, address`. */
export function locationText(latitude: number, longitude: number, name?: string | null, address?: string | null) {
  const place = [name, address].filter((p): p is string => !!p?.trim()).join(', ');
  return `📍 Location: ${coordinate(latitude)}, ${coordinate(longitude)}${place ? ` — ${place}` : ''}`;
}

/** A shared contact card as text: `Contact card: Mum, +49 151 1234567`. Another person's number, not the sender's. */
export function contactCardText(name: string | null | undefined, phones: (string | null | undefined)[]) {
  const parts = [name?.trim() || 'Unnamed', ...phones.filter((p): p is string => !!p?.trim())];
  return `Contact card: ${parts.join(', ')}`;
}

/** How each attachment kind is named in the inbox (unknown kinds are an "Attachment"). */
const ATTACHMENT_LABEL: Record<string, string> = {
  image: 'Photo',
  picture: 'Photo',
  photo: 'Photo',
  video: 'Video',
  video_note: 'Video message',
  audio: 'Audio',
  voice: 'Voice message',
  sticker: 'Sticker',
  animation: 'GIF',
  document: 'File',
  file: 'File',
  location: 'Location',
  fallback: 'Link',
  share: 'Shared post',
  story_mention: 'Story mention',
  ig_reel: 'Reel',
  reel: 'Reel',
};

export const attachmentLabel = (type: string) => ATTACHMENT_LABEL[type] ?? 'Attachment';
