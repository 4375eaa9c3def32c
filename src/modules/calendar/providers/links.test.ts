// A video call's join link comes from whoever wrote the event (an outside organizer's invitation
// included): only an http(s) link is shown as one.
import { describe, expect, it } from 'vitest';
import { fromGoogle } from './google.js';
import { fromGraph } from './microsoft.js';

const when = { start: { dateTime: '2026-11-24T15:00:00Z' }, end: { dateTime: '2026-11-24T15:30:00Z' } };

describe('join links from the providers', () => {
  it('Google: a Meet link is kept, a script in its place is not', () => {
    const meet = fromGoogle(
      {
        id: 'a',
        ...when,
        conferenceData: { entryPoints: [{ entryPointType: 'video', uri: 'https://meet.google.com/abc-defg-hij' }] },
      } as never,
      'UTC',
    );
    expect(meet.conference).toEqual({ product: 'meet', joinUrl: 'https://meet.google.com/abc-defg-hij' });
    const script = fromGoogle(
      {
        id: 'b',
        ...when,
        conferenceData: { entryPoints: [{ entryPointType: 'video', uri: 'javascript:alert(1)' }] },
      } as never,
      'UTC',
    );
    expect(script.conference).toBeNull();
  });

  it('Microsoft: a Teams link is kept, a script in its place is not', () => {
    const graph = (joinUrl: string) =>
      fromGraph({
        id: 'c',
        start: { dateTime: '2026-11-24T15:00:00.0000000', timeZone: 'UTC' },
        end: { dateTime: '2026-11-24T15:30:00.0000000', timeZone: 'UTC' },
        isOnlineMeeting: true,
        onlineMeeting: { joinUrl },
      } as never);
    expect(graph('https://teams.microsoft.com/l/meetup-join/x').conference).toEqual({
      product: 'teams',
      joinUrl: 'https://teams.microsoft.com/l/meetup-join/x',
    });
    expect(graph('data:text/html,<script>alert(1)</script>').conference).toBeNull();
  });
});
