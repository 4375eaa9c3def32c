import { CHANNEL_LABEL, type Channel } from './inbox-api.js';

/** The channel a conversation is on, as a small labelled badge. */
export function ChannelBadge({ channel }: { channel: Channel }) {
  return (
    <span className={`channel-badge channel-${channel}`} data-testid="channel-badge">
      {CHANNEL_LABEL[channel]}
    </span>
  );
}
