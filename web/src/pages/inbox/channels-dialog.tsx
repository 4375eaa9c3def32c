/**
 * Channels (admins): the connected accounts with the webhook URL to paste into each provider's
 * console, a form to connect one more (credentials per provider, never shown again), disconnect.
 */
import { type FormEvent, useId, useState } from 'react';
import { describeError } from '../../api.js';
import { Button } from '../../components/ui/button.js';
import { AppDialog, ConfirmDialog } from '../../components/ui/dialog.js';
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

function ConnectForm({ onDone }: { onDone: () => void }) {
  const [channel, setChannel] = useState<Channel>('whatsapp');
  const [name, setName] = useState('');
  const [values, setValues] = useState<Record<string, string>>({});
  const connect = useConnectChannel();
  const base = useId();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const credentials = Object.fromEntries(FIELDS[channel].map((f) => [f.key, (values[f.key] ?? '').trim()]));
    connect.mutate(
      { channel, name: name.trim() || CHANNEL_LABEL[channel], credentials },
      {
        onSuccess: () => {
          notifySuccess(`${CHANNEL_LABEL[channel]} connected`, 'Paste its webhook URL into the provider’s console.');
          setValues({});
          setName('');
          onDone();
        },
      },
    );
  };
  return (
    <form className="form" onSubmit={submit} noValidate data-testid="connect-channel-form">
      <div className="form-row">
        <div className="field">
          <label htmlFor={`${base}-channel`}>Channel</label>
          <select
            id={`${base}-channel`}
            value={channel}
            onChange={(e) => setChannel(e.target.value as Channel)}
            data-testid="connect-channel"
          >
            {CHANNEL_LIST.map((c) => (
              <option key={c} value={c}>
                {CHANNEL_LABEL[c]}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${base}-name`}>Name</label>
          <input
            id={`${base}-name`}
            value={name}
            maxLength={100}
            placeholder={CHANNEL_LABEL[channel]}
            onChange={(e) => setName(e.target.value)}
          />
        </div>
      </div>
      {FIELDS[channel].map((f) => (
        <div className="field" key={`${channel}-${f.key}`}>
          <label htmlFor={`${base}-${f.key}`}>{f.label}</label>
          <input
            id={`${base}-${f.key}`}
            value={values[f.key] ?? ''}
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => setValues({ ...values, [f.key]: e.target.value })}
            data-testid={`credential-${f.key}`}
          />
          {f.hint ? <p className="field-hint">{f.hint}</p> : null}
        </div>
      ))}
      {connect.isError ? (
        <p className="field-error" role="alert" data-testid="connect-error">
          {describeError(connect.error)}
        </p>
      ) : null}
      <div className="form-actions">
        <Button type="submit" isDisabled={connect.isPending} data-testid="connect-submit">
          {connect.isPending ? 'Connecting…' : 'Connect'}
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
