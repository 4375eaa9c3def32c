// Health probes of the channels (contract §9): the share of each channel's webhook calls that were
// verified and well-formed since the last run (`sms:acceptance-rate`, `chat-<channel>:acceptance-rate`).
import type { DependencyProbe } from '../../platform/module.js';
import { CHANNELS } from './providers/types.js';
import { webhookCounters } from './service.js';

export const channelMonitors: DependencyProbe[] = CHANNELS.map((channel) => ({
  id: channel === 'sms' ? 'sms:acceptance-rate' : `chat-${channel}:acceptance-rate`,
  feature: `channel-${channel}`,
  slo: '≥ 95 % of webhook calls verified and well-formed',
  measure: async () => webhookCounters[channel].measure(),
}));
