// Health probes of the channels (contract §9): the share of each channel's webhook calls that were
// verified and well-formed since the last run (`sms:acceptance-rate`, `chat-<channel>:acceptance-rate`).
import { and, eq, isNull } from 'drizzle-orm';
import type { DependencyProbe } from '../../platform/module.js';
import { CHANNELS } from './providers/types.js';
import { webhookCounters } from './service.js';
import { channelConnections } from './tables.js';

const LABEL = {
  telegram: 'Telegram',
  whatsapp: 'WhatsApp',
  messenger: 'Messenger',
  instagram: 'Instagram',
  viber: 'Viber',
  sms: 'SMS',
} as const;

export const channelMonitors: DependencyProbe[] = CHANNELS.map((channel) => ({
  id: channel === 'sms' ? 'sms:acceptance-rate' : `chat-${channel}:acceptance-rate`,
  feature: `channel-${channel}`,
  slo: '≥ 95 % of webhook calls verified and well-formed',
  impact: `${LABEL[channel]} messages from patients may not be arriving.`,
  affects: async (tx, workspaceId) => {
    const rows = await tx
      .select({ id: channelConnections.id })
      .from(channelConnections)
      .where(
        and(
          eq(channelConnections.workspaceId, workspaceId),
          eq(channelConnections.channel, channel),
          isNull(channelConnections.deletedAt),
        ),
      )
      .limit(1);
    return rows.length > 0;
  },
  measure: async () => webhookCounters[channel].measure(),
}));
