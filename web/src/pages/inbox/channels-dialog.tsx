/**
 * Channels (admins): the connected accounts with the webhook URL to paste into each provider's
 * console, a form to connect one more (credentials per provider, never shown again), disconnect.
 */
import { useId, useState } from 'react';
import { z } from 'zod';
import { Button } from '../../components/ui/button.js';
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
      hint: 'Any 16+ letters, digits, _ or -; Telegram sends it with every update',
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
      credentials: Object.fromEntries(CHANNEL_LIST.flatMap((c) => FIELDS[c].map((f) => [f.key, '']))),
    },
  });
  const channel = form.watch('channel');
  const onSubmit = form.handleSubmit((values) => {
    // Only this channel's credentials (the form keeps what was typed for another one).
    const credentials = Object.fromEntries(FIELDS[values.channel].map((f) => [f.key, values.credentials[f.key] ?? '']));
    return connect
      .mutateAsync({ channel: values.channel, name: values.name || CHANNEL_LABEL[values.channel], credentials })
      .then(() => {
        notifySuccess(
          `${CHANNEL_LABEL[values.channel]} connected`,
          'Paste its webhook URL into the provider’s console.',
        );
        form.reset();
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
  const [confirm, setConfirm] = useState<string | null>(null);
  return (
    <AppDialog
      title="Channels"
      isOpen
      onOpenChange={(open) => (!open ? onClose() : undefined)}
      size="large"
      testId="channels-dialog"
    >
      <p className="muted">
        Each provider calls its webhook URL; every call is checked against the provider’s signature before anything is
        stored. Telegram is set up for you when you connect.
      </p>
      <ul className="channel-connections" data-testid="channel-connections">
        {connections.data?.items.map((c) => (
          <li key={c.id} className="channel-connection">
            <div className="channel-connection-top">
              <ChannelBadge channel={c.channel} />
              <strong>{c.name}</strong>
              <Button variant="ghost" size="small" onPress={() => setConfirm(c.id)} data-testid="disconnect-channel">
                Disconnect
              </Button>
            </div>
            <code className="channel-webhook" data-testid="channel-webhook">
              {c.webhookUrl}
            </code>
          </li>
        ))}
      </ul>
      <h3>Connect a channel</h3>
      <ConnectForm onDone={() => undefined} />
      <ConfirmDialog
        title="Disconnect this channel?"
        description="Its webhooks stop being accepted at once. The conversations stay in the inbox."
        confirmLabel="Disconnect"
        isOpen={confirm !== null}
        onOpenChange={(open) => (!open ? setConfirm(null) : undefined)}
        onConfirm={() =>
          confirm &&
          disconnect.mutate(confirm, {
            onSuccess: () => {
              setConfirm(null);
              notifySuccess('Channel disconnected');
            },
          })
        }
        pending={disconnect.isPending}
      />
    </AppDialog>
  );
}
