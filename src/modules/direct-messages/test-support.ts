// Test helpers shared by the direct-messages test files (not imported by production code).
import type { TestApp } from '../../../test/helpers/app.js';

export { openSse, type SseClient, type SseEvent } from '../../../test/helpers/sse.js';

export async function sendDm(t: TestApp, token: string, payload: Record<string, unknown>, headers = {}) {
  return t.request({ method: 'POST', url: '/api/v1/direct-messages', token, payload, headers });
}

export async function auditRows(t: TestApp, adminToken: string, kind: string) {
  const res = await t.request({ method: 'GET', url: `/api/v1/audit?kind=${kind}&limit=200`, token: adminToken });
  return res.json().items as Record<string, unknown>[];
}
