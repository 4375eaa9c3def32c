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

/**
 * A failed reply in words a receptionist can act on, from the provider's words and code as we keep them
 * (`…code 131047…`, `…error 30003…`, Telegram's and Viber's descriptions), and whether sending the same
 * words again could help (it cannot when the patient blocked us or the number cannot receive them).
 */
export function explainFailure(channel: string, error: string | null): { summary: string; retryable: boolean } {
  const text = error ?? '';
  const code = /\b(?:code|error) (\d{3,6})\b/.exec(text)?.[1];
  const known = code ? FAILURE_CODES[`${channel}:${code}`] : undefined;
  if (known) return known;
  for (const [pattern, explained] of FAILURE_WORDS[channel] ?? []) if (pattern.test(text)) return explained;
  const label = CHANNEL_NAMES[channel] ?? 'The provider';
  if (!error) return { summary: `${label} could not deliver it.`, retryable: true };
  if (/refused/i.test(text)) return { summary: `${label} refused it.`, retryable: true };
  if (/could not be reached/i.test(text)) return { summary: `${label} could not be reached.`, retryable: true };
  if (/interrupted/i.test(text))
    return { summary: 'The send was interrupted; it may have reached them.', retryable: true };
  return { summary: `${label} could not deliver it.`, retryable: true };
}

const CHANNEL_NAMES: Record<string, string> = {
  telegram: 'Telegram',
  whatsapp: 'WhatsApp',
  messenger: 'Messenger',
  instagram: 'Instagram',
  viber: 'Viber',
  sms: 'SMS',
};

const final = (summary: string) => ({ summary, retryable: false });
const FAILURE_CODES: Record<string, { summary: string; retryable: boolean }> = {
  'whatsapp:131047': final(
    'More than 24 hours have passed since the patient last wrote, so WhatsApp only delivers an approved template message now. Ask them to write first, or reach them another way.',
  ),
  'whatsapp:131026': final(
    'WhatsApp could not deliver it: the number may not be on WhatsApp, or the patient has not accepted its latest terms.',
  ),
  'whatsapp:131051': final('WhatsApp does not support this kind of message.'),
  'whatsapp:131056': {
    summary: 'Too many messages to this patient in a short time: wait a minute, then retry.',
    retryable: true,
  },
  'whatsapp:130429': {
    summary: 'WhatsApp is rate limiting the clinic’s number: wait a minute, then retry.',
    retryable: true,
  },
  'sms:30003': {
    summary: 'The patient’s phone is switched off or out of reach. Try again later, or call.',
    retryable: true,
  },
  'sms:30005': final('The number does not exist or is no longer in service. Check the number on file.'),
  'sms:30006': final('The number is a landline or cannot receive text messages. Call instead.'),
  'sms:30007': final('The patient’s carrier filtered it as spam. Call, or reword it without links.'),
  'sms:21610': final('The patient has opted out of texts from the clinic (replied STOP).'),
  'sms:21211': final('The number on file is not a valid phone number.'),
};

const FAILURE_WORDS: Record<string, [RegExp, { summary: string; retryable: boolean }][]> = {
  telegram: [
    [/bot was blocked by the user/i, final('The patient has blocked the clinic’s Telegram bot.')],
    [/user is deactivated/i, final('The patient’s Telegram account is deleted.')],
    [/chat not found/i, final('Telegram no longer knows this chat: the patient has to write to the bot first.')],
    [/too many requests/i, { summary: 'Telegram asked us to slow down: wait a moment, then retry.', retryable: true }],
  ],
  viber: [
    [
      /receiverNotSubscribed|not subscribed|status 6\b/i,
      final('The patient has unsubscribed from (or blocked) the clinic’s Viber account.'),
    ],
  ],
};
