// Contract §3: an admin_action audit row names its action and its target. Connecting and
// disconnecting a channel name the connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectChannel } from '../../../test/helpers/channels.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';

let t: TestApp;
let ws: TestWorkspace;

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
});
afterAll(async () => t?.close());

describe('channel audit rows', () => {
  it('name the connection as target on connect and disconnect', async () => {
    const connected = await connectChannel(t, ws.admin.token, 'telegram');
    const removed = await t.request({
      method: 'DELETE',
      url: `/api/v1/channels/${connected.id}`,
      token: ws.admin.token,
    });
    expect(removed.statusCode, removed.body).toBe(204);
    const audit = await t.request({
      method: 'GET',
      url: '/api/v1/audit?kind=admin_action&limit=50',
      token: ws.admin.token,
    });
    expect(audit.statusCode, audit.body).toBe(200);
    const rows = (audit.json().items as { action: string; target?: string }[]).filter((r) =>
      r.action.startsWith('channel.'),
    );
    expect(rows.map((r) => [r.action, r.target]).sort()).toEqual([
      ['channel.connected', connected.id],
      ['channel.disconnected', connected.id],
    ]);
  });
});
