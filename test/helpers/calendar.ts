// Connects a calendar account the way a browser would: POST /calendar/connections, follow the
// emulator's consent redirect, then our callback (real HTTP to the listening test app).
import { expect } from 'vitest';
import type { TestApp } from './app.js';

export async function connectCalendar(
  t: TestApp,
  token: string,
  provider: 'google' | 'microsoft',
  loginHint?: string,
): Promise<{ connectionId: string; calendarId: string; accountEmail: string }> {
  const start = await t.request({ method: 'POST', url: '/api/v1/calendar/connections', token, payload: { provider } });
  expect(start.statusCode, start.body).toBe(201);
  const authorize = new URL(start.json().authorizeUrl);
  if (loginHint) authorize.searchParams.set('login_hint', loginHint);
  const consent = await fetch(authorize, { redirect: 'manual' });
  expect(consent.status).toBe(302);
  const callback = new URL(consent.headers.get('location') ?? '');
  const back = await t.request({ method: 'GET', url: `${callback.pathname}${callback.search}` });
  expect(back.statusCode, back.body).toBe(302);
  expect(back.headers.location).toBe(`/calendar?connected=${provider}`);
  const connections = await t.request({ method: 'GET', url: '/api/v1/calendar/connections', token });
  const email = (loginHint ?? `demo@${provider}.example`).toLowerCase();
  const connection = connections
    .json()
    .items.find((c: { accountEmail: string; provider: string }) => c.accountEmail === email && c.provider === provider);
  expect(connection, connections.body).toBeTruthy();
  const calendars = await t.request({ method: 'GET', url: '/api/v1/calendar/calendars', token });
  const calendar = calendars
    .json()
    .items.find((c: { connectionId: string; primary: boolean }) => c.connectionId === connection.id && c.primary);
  expect(calendar, calendars.body).toBeTruthy();
  return { connectionId: connection.id, calendarId: calendar.id, accountEmail: email };
}
