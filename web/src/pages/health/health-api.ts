/** Health monitoring (contract §9): banners for the user, the admins' dashboard, the public status. */
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api.js';

export type CheckStatus = 'pass' | 'warn' | 'fail';

export interface Banner {
  feature: string;
  status: 'degraded' | 'down';
  message: string;
  since: string;
}

export interface Dashboard {
  status: CheckStatus;
  components: {
    name: string;
    feature: string;
    status: CheckStatus;
    since: string | null;
    slo: string;
    observed: string | null;
    output: string | null;
    checkedAt: string | null;
    history: { at: string; status: CheckStatus; value: number | null }[];
    unit: string | null;
  }[];
  incidents: {
    id: string;
    component: string;
    status: 'open' | 'closed';
    summary: string;
    openedAt: string;
    closedAt: string | null;
  }[];
}

export interface PublicStatus {
  status: 'operational' | 'degraded';
  features: {
    feature: string;
    status: 'operational' | 'down';
    since: string | null;
    uptime: { day: string; percent: number }[];
  }[];
}

export const useBanners = () =>
  useQuery({
    queryKey: ['health', 'banners'],
    queryFn: ({ signal }) => api.get<{ items: Banner[] }>('/health/banners', undefined, signal),
    refetchInterval: 60_000,
    // A failing banner call never gets in the way of the page.
    retry: false,
  });

export const useDashboard = () =>
  useQuery({
    queryKey: ['health', 'dashboard'],
    queryFn: ({ signal }) => api.get<Dashboard>('/integrations/chain-health', undefined, signal),
    refetchInterval: 60_000,
  });

export const usePublicStatus = () =>
  useQuery({
    queryKey: ['health', 'status'],
    queryFn: ({ signal }) => api.get<PublicStatus>('/status', undefined, signal),
    refetchInterval: 60_000,
  });

/** Words for the features the probes name. */
export const FEATURE_LABEL: Record<string, string> = {
  everything: 'Atrium (database)',
  'calendar-google': 'Google Calendar',
  'calendar-microsoft': 'Microsoft Calendar',
  'calendar-zoom': 'Zoom',
  telehealth: 'Video visits',
  mail: 'Incoming mail',
  'channel-telegram': 'Telegram',
  'channel-whatsapp': 'WhatsApp',
  'channel-messenger': 'Messenger',
  'channel-instagram': 'Instagram',
  'channel-viber': 'Viber',
  'channel-sms': 'SMS',
  'channel-meta': 'WhatsApp, Messenger and Instagram replies',
  assistant: 'Assistant',
  storage: 'File storage',
  payments: 'Payments',
  speech: 'Reading aloud',
};
export const featureLabel = (f: string) => FEATURE_LABEL[f] ?? f;

/** What each kind of check measures, in words (`<component>:<measurement>`, the part after the colon). */
const MEASUREMENT_LABEL: Record<string, string> = {
  reachability: 'Reachable',
  'replication-lag': 'Replica delay',
  'rls-policies': 'Workspaces kept apart',
  write: 'Saving files',
  latency: 'Response time',
  'error-rate': 'Errors',
  fallback: 'Fallback ready',
  'relay-reachability': 'Video relay',
  'room-creation': 'Rooms created',
  'token-refresh': 'Sign-in renewal',
  'acceptance-rate': 'Incoming messages accepted',
  checkout: 'Payment links',
  'webhook-ingress': 'Payment confirmations accepted',
};

/** A check's title in words ("Sign-in renewal"); its id stays beside it for operators. */
export const checkLabel = (name: string) => MEASUREMENT_LABEL[name.split(':')[1] ?? ''] ?? name;
