// One adapter per provider behind one interface: how its webhooks are verified (on the raw bytes,
// constant-time), what its payloads mean (messages and delivery/read statuses), and how a reply is
// sent through its API (platform/upstream).
import type { z } from 'zod';

export const CHANNELS = ['telegram', 'whatsapp', 'messenger', 'instagram', 'viber', 'sms'] as const;
export type ChannelName = (typeof CHANNELS)[number];
/** How people name each channel (health notices, the web app's inbox). */
export const CHANNEL_LABEL: Record<ChannelName, string> = {
  telegram: 'Telegram',
  whatsapp: 'WhatsApp',
  messenger: 'Messenger',
  instagram: 'Instagram',
  viber: 'Viber',
  sms: 'SMS',
};

export interface Attachment {
  type: string;
  url?: string;
  mimeType?: string;
  name?: string;
}

/** A message a contact sent. */
export interface InboundMessage {
  kind: 'message';
  /** What makes a provider's retry recognisable (Telegram `update:<update_id>`, else the message id). */
  dedupKey: string;
  /** The provider's id of the message, exactly (a string: Viber's tokens exceed 2^53). */
  providerMessageId: string;
  contact: { externalId: string; name: string | null; phone: string | null };
  text: string;
  attachments: Attachment[];
  at: Date;
  /**
   * The business number, page or account the message was sent to, when the payload names it
   * (WhatsApp's `phone_number_id`, Messenger's and Instagram's `entry[].id`).
   */
  businessId?: string;
}

/** A delivery or read report about messages we sent. */
export interface StatusUpdate {
  kind: 'status';
  status: 'sent' | 'delivered' | 'read' | 'failed';
  /** The messages it is about, by provider id… */
  providerMessageIds?: string[];
  /** …or every message to this contact up to `watermark` (Messenger/Instagram read and delivery)… */
  contactExternalId?: string;
  watermark?: Date;
  /** …or, with `contactExternalId`, this message and every earlier one to the contact (Instagram's `read.mid`). */
  upToProviderMessageId?: string;
  error?: string;
  /** As on InboundMessage: the business number, page or account the report is about. */
  businessId?: string;
}

/**
 * A part of a verified notification that is not handled (a kind we do not store, such as Messenger's
 * `optin`, or an item not in the shape we know): acknowledged with the rest, counted and logged by its
 * kind only (never its content), so one such item never costs the notification's other messages.
 */
export interface SkippedItem {
  kind: 'skipped';
  /** What it was, without anything the patient wrote or who they are (e.g. `messaging.optin`). */
  what: string;
}

export type ChannelEvent = InboundMessage | StatusUpdate | SkippedItem;

export interface WebhookRequest {
  /** The body exactly as received. */
  raw: Buffer;
  /** Lower-case header names. */
  headers: Record<string, string | string[] | undefined>;
  /** The full public URL the provider called (Twilio signs it). */
  url: string;
  contentType: string;
}

export interface SendTarget {
  externalId: string;
  phone: string | null;
}

export interface SendContext {
  /** The provider API's base URL (the emulator's by default). */
  baseUrl: string;
  requestId: string;
  /** Where the provider should report delivery statuses (Twilio's StatusCallback). */
  statusCallbackUrl: string;
  /** Splits the circuit breaker per connection, so one workspace's bad token trips only its own. */
  breakerKey: string;
}

/** The provider refused or could not be reached: the message is stored as `failed` with this. */
export class SendFailed extends Error {}

/** Where a contact's profile is read (the provider's API, the connection's breaker). */
export interface ProfileContext {
  baseUrl: string;
  requestId: string;
  breakerKey: string;
  signal?: AbortSignal;
}

/**
 * A contact's name as the provider tells it. `refused`: the provider answered and said no (a token it
 * does not accept, an id it does not know, the person's privacy): asking again will not help.
 * `unavailable`: it could not be asked (down, timed out, rate limited): worth asking again later.
 * Reasons carry status and codes only, never what the provider said about the person.
 */
export type ProfileLookup =
  | { outcome: 'found'; name: string | null }
  | { outcome: 'refused'; reason: string }
  | { outcome: 'unavailable'; reason: string; retryAfterMs?: number };

export interface ChannelAdapter<C = Record<string, string>> {
  channel: ChannelName;
  /** The provider's API (used when emulators are off). */
  realBaseUrl: string;
  /** The emulator that stands in for it (`/_emulators/<name>`). */
  emulator: 'telegram' | 'meta' | 'viber' | 'twilio';
  credentials: z.ZodType<C>;
  /**
   * What the provider posts to the webhook (the OpenAPI document's request body): its media type and
   * what it is. The route keeps the bytes as received; only `verify` and `parse` read them.
   */
  webhookBody: { mediaType: 'application/json' | 'application/x-www-form-urlencoded'; description: string };
  /** Whether the request is from the provider (constant-time, over the raw bytes). */
  verify(request: WebhookRequest, credentials: C): boolean;
  /** What the verified request says; throws on a payload that is not the provider's shape. */
  parse(request: WebhookRequest): ChannelEvent[];
  send(context: SendContext, credentials: C, to: SendTarget, text: string): Promise<{ providerMessageId: string }>;
  /**
   * The contact's display name, for channels whose webhooks carry none (Messenger, Instagram: Graph's
   * User Profile API). Read once per contact by the `channels.contact-profile` job.
   */
  profile?(context: ProfileContext, credentials: C, externalId: string): Promise<ProfileLookup>;
  /** Registers the webhook at the provider when connecting (Telegram setWebhook). */
  register?(context: SendContext, credentials: C, webhookUrl: string): Promise<void>;
  /** Meta's subscription handshake: the verify token to compare with `hub.verify_token`. */
  verifyToken?(credentials: C): string;
  /**
   * The business number, page or account this connection is (WhatsApp's phone_number_id, the
   * Messenger page id, the Instagram account id). One Meta app posts the events of every number and
   * page it serves to one callback URL, so events naming another belong to that one's connection.
   */
  businessIdOf?(credentials: C): string;
  /** The secret the signature was checked with: a sibling connection is only trusted with the same one. */
  signingSecretOf?(credentials: C): string;
}
