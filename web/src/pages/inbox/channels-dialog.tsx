/**
 * Channels (admins): the connected accounts with the webhook URL to paste into each provider's
 * console, a form to connect one more (credentials per provider, never shown again), disconnect.
 */
import { useId, useState } from 'react';
import { z } from 'zod';
import { Button } from '../../components/ui/button.js';
import { CopyButton } from '../../components/ui/copy-button.js';
import { AppDialog, ConfirmDialog } from '../../components/ui/dialog.js';
import { applyProblem, FormError, TextInput, useZodForm } from '../../components/ui/form.js';
import { notifySuccess } from '../../components/ui/toast.js';
import { ChannelBadge } from './channel-badge.js';
import {
  CHANNEL_LABEL,
  CHANNEL_LIST,
  type Channel,
  useConnectChannel,
  useConnections,
  useDisconnectChannel,
} from './inbox-api.js';

/** The credentials each provider needs (contract §8), with the words its console uses. */
const FIELDS: Record<Channel, { key: string; label: string; hint?: string }[]> = {
  telegram: [
    { key: 'botToken', label: 'Bot token', hint: 'From @BotFather, like 123456:ABC-def…' },
    {
      key: 'secretToken',
      label: 'Secret token',
      hint: 'Made for you: Telegram sends it with every message, so Atrium knows the message is real. Keep it, or paste your own (16 or more letters, digits, _ or -).',
    },
  ],
  whatsapp: [
    { key: 'appSecret', label: 'App secret' },
    { key: 'verifyToken', label: 'Verify token', hint: 'The same word you enter in Meta’s webhook settings' },
    { key: 'accessToken', label: 'Access token' },
    { key: 'phoneNumberId', label: 'Phone number ID' },
  ],
  messenger: [
    { key: 'appSecret', label: 'App secret' },
    { key: 'verifyToken', label: 'Verify token' },
    { key: 'accessToken', label: 'Page access token' },
    { key: 'pageId', label: 'Page ID' },
  ],
  instagram: [
    { key: 'appSecret', label: 'App secret' },
    { key: 'verifyToken', label: 'Verify token' },
    { key: 'accessToken', label: 'Page access token' },
    { key: 'pageId', label: 'Page ID' },
  ],
  viber: [{ key: 'authToken', label: 'Auth token', hint: 'From the Viber Admin Panel' }],
  sms: [
    { key: 'accountSid', label: 'Twilio Account SID' },
    { key: 'authToken', label: 'Auth token' },
    { key: 'phoneNumber', label: 'Phone number', hint: 'In E.164 form, e.g. +15551234567' },
  ],
};

/** 32 random letters, digits, _ and - (what Telegram accepts as a webhook's secret token). */
function randomSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** Empty credentials of every channel, but Telegram's secret token, which nobody needs to invent. */
const freshCredentials = () => ({
  ...Object.fromEntries(CHANNEL_LIST.flatMap((c) => FIELDS[c].map((f) => [f.key, '']))),
  secretToken: randomSecret(),
});

/** Where each provider's webhook URL is pasted, in its own words. */
const PROVIDER_CONSOLE: Record<Channel, string> = {
  telegram: 'Telegram',
  whatsapp: 'the WhatsApp settings of your Meta app',
  messenger: 'the Messenger settings of your Meta app',
  instagram: 'the Instagram settings of your Meta app',
  viber: 'the Viber Admin Panel',
  sms: 'your Twilio phone number’s messaging settings',
};

const connectForm = z
  .object({
    channel: z.enum(CHANNEL_LIST as [Channel, ...Channel[]]),
    name: z.string().trim().max(100, 'Keep it to 100 characters or fewer.'),
    credentials: z.record(z.string(), z.string().trim()),
  })
  .superRefine((values, ctx) => {
    for (const f of FIELDS[values.channel]) {
      if (!values.credentials[f.key])
        ctx.addIssue({ code: 'custom', path: ['credentials', f.key], message: 'Fill this in.' });
    }
  });

/**
 * The one form approach (react-hook-form, checked before sending): the server's answer to a bad
 * credential (`body.credentials.pageId`: "The page id is the number Meta shows, digits only") is
 * shown beside that field by `applyProblem`; only what concerns no field goes at the top.
 */
function ConnectForm({ onDone }: { onDone: () => void }) {
  const connect = useConnectChannel();
  const base = useId();
  const form = useZodForm(connectForm, {
    defaultValues: {
      channel: 'whatsapp',
      name: '',
      credentials: freshCredentials(),
    },
  });
  const channel = form.watch('channel');
  const onSubmit = form.handleSubmit((values) => {
    // Only this channel's credentials (the form keeps what was typed for another one).
    const credentials = Object.fromEntries(FIELDS[values.channel].map((f) => [f.key, values.credentials[f.key] ?? '']));
    return connect
      .mutateAsync({ channel: values.channel, name: values.name || CHANNEL_LABEL[values.channel], credentials })
      .then(() => {
        // Telegram is set up by connecting (setWebhook); the others need the URL pasted at the provider.
        notifySuccess(
          `${CHANNEL_LABEL[values.channel]} connected`,
          values.channel === 'telegram'
            ? 'Patients’ Telegram messages now arrive in the Inbox.'
            : `Copy its webhook URL below into ${PROVIDER_CONSOLE[values.channel]}; then patients’ messages arrive in the Inbox.`,
        );
        form.reset({ channel: values.channel, name: '', credentials: freshCredentials() });
        onDone();
      })
      .catch((error) => applyProblem(form, error));
  });
  return (
    <form className="form" onSubmit={onSubmit} noValidate data-testid="connect-channel-form">
      <FormError message={form.formState.errors.root?.message} testId="connect-error" />
      <div className="form-row">
        <div className="field">
          <label htmlFor={`${base}-channel`}>Channel</label>
          <select
            id={`${base}-channel`}
            {...form.register('channel', { onChange: () => form.clearErrors() })}
            data-testid="connect-channel"
          >
            {CHANNEL_LIST.map((c) => (
              <option key={c} value={c}>
                {CHANNEL_LABEL[c]}
              </option>
            ))}
          </select>
        </div>
        <TextInput
          control={form.control}
          name="name"
          label="Name"
          placeholder={CHANNEL_LABEL[channel]}
          maxLength={100}
        />
      </div>
      {FIELDS[channel].map((f) => (
        <TextInput
          key={`${channel}-${f.key}`}
          control={form.control}
          name={`credentials.${f.key}`}
          label={f.label}
          description={f.hint}
          isRequired
          autoComplete="off"
        />
      ))}
      <div className="form-actions">
        <Button type="submit" isDisabled={form.formState.isSubmitting} data-testid="connect-submit">
          {form.formState.isSubmitting ? 'Connecting…' : 'Connect'}
        </Button>
      </div>
    </form>
  );
}

export function ChannelsDialog({ onClose }: { onClose: () => void }) {
  const connections = useConnections(true);
  const disconnect = useDisconnectChannel();
  const [confirm, setConfirm] = useState<{ id: string; name: string; channel: Channel } | null>(null);
  return (
    <AppDialog
      title="Channels"
      isOpen
      onOpenChange={(open) => (!open ? onClose() : undefined)}
      size="large"
      testId="channels-dialog"
    >
      <p className="muted">
        Connect the messaging apps your patients write from. For each one, copy its webhook URL below into the
        provider’s settings (Meta, Viber, Twilio); Atrium keeps only messages the provider has signed. Telegram needs
        nothing pasted: connecting sets it up.
      </p>
      <ul className="channel-connections" data-testid="channel-connections">
        {connections.data?.items.map((c) => (
          <li key={c.id} className="channel-connection">
            <div className="channel-connection-top">
              <ChannelBadge channel={c.channel} />
              <strong>{c.name}</strong>
              <Button
                variant="ghost"
                size="small"
                onPress={() => setConfirm({ id: c.id, name: c.name, channel: c.channel })}
                aria-label={`Disconnect ${c.name} (${CHANNEL_LABEL[c.channel]})`}
                data-testid="disconnect-channel"
              >
                Disconnect
              </Button>
            </div>
            <div className="channel-webhook-row">
              <code className="channel-webhook" data-testid="channel-webhook">
                {c.webhookUrl}
              </code>
              <CopyButton text={c.webhookUrl} label={`webhook URL of ${c.name}`} testId="copy-channel-webhook" />
            </div>
          </li>
        ))}
      </ul>
      <h3>Connect a channel</h3>
      <ConnectForm onDone={() => undefined} />
      <ConfirmDialog
        title={confirm ? `Disconnect ${confirm.name} (${CHANNEL_LABEL[confirm.channel]})?` : 'Disconnect?'}
        description="Messages patients send to it stop arriving at once. Its conversations stay in the inbox."
        confirmLabel="Disconnect"
        isOpen={confirm !== null}
        onOpenChange={(open) => (!open ? setConfirm(null) : undefined)}
        onConfirm={() =>
          confirm &&
          disconnect.mutate(confirm.id, {
            onSuccess: () => {
              notifySuccess(`${confirm.name} disconnected`);
              setConfirm(null);
            },
          })
        }
        pending={disconnect.isPending}
      />
    </AppDialog>
  );
}
