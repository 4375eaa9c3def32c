// A connection's sealed credentials (the secret box, bound to its workspace and id) and the provider
// API its adapter calls (the emulator's when emulators are on).
import { decryptSecret } from '../../platform/crypto.js';
import type { AppDeps } from '../../platform/types.js';
import type { ConnectionRow } from './inbound.js';
import type { ChannelAdapter } from './providers/index.js';

export const aad = (workspaceId: string, id: string) => `channel:${workspaceId}:${id}`;
export const keys = (deps: AppDeps) => [{ id: deps.config.encryptionKeyId, key: deps.config.encryptionKey }];

export function credentialsOf(deps: AppDeps, row: ConnectionRow): Record<string, string> {
  return JSON.parse(decryptSecret(keys(deps), row.credentialsEnc, aad(row.workspaceId, row.id)));
}

export const baseUrlOf = (deps: AppDeps, adapter: ChannelAdapter<Record<string, string>>) =>
  deps.config.emulators ? `${deps.selfUrl()}/_emulators/${adapter.emulator}` : adapter.realBaseUrl;
