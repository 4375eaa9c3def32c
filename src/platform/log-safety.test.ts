import { describe, expect, it } from 'vitest';
import { safeError, scrubPersonalData } from './log-safety.js';

describe('log-safe errors', () => {
  it("keep what an operator needs and drop the patient's address, number and the URL's query", () => {
    const smtp = new Error(
      "Can't send mail - all recipients were rejected: 550 5.1.1 <jane.doe+visits@mail.example.org>: Recipient address rejected",
    );
    const logged = safeError(smtp);
    expect(logged.message).toBe(
      "Can't send mail - all recipients were rejected: 550 5.1.1 <[e-mail]>: Recipient address rejected",
    );
    expect(logged.stack).not.toContain('jane.doe');
    expect(logged.type).toBe('Error');

    const twilio = safeError(new Error("HTTP 400: The 'To' number +14155550199 is not a valid phone number (21211)"));
    expect(twilio.message).toBe("HTTP 400: The 'To' number [phone] is not a valid phone number (21211)");

    expect(scrubPersonalData('redirect to https://hooks.example/cb?token=abc&patient=Maria#x failed')).toBe(
      'redirect to https://hooks.example/cb?[…] failed',
    );
    // Ids, statuses, times and durations stay readable.
    const plain = 'job job_01jv6 failed at 2026-11-26T21:51:41Z after 1500 ms: HTTP 503 from 127.0.0.1:4000';
    expect(scrubPersonalData(plain)).toBe(plain);
  });

  it("drops a failed statement's parameters however they are written", () => {
    // Drizzle's message with the list written otherwise than String() writes it (here JSON): cut to the stack.
    const err = Object.assign(
      new Error('Failed query: insert into users values ($1, $2)\nparams: ["Zelda Quux","zelda@example.com"]'),
      { params: ['Zelda Quux', 'zelda@example.com'], query: 'insert into users values ($1, $2)' },
    );
    const logged = safeError(err);
    expect(logged.message).toBe('Failed query: insert into users values ($1, $2)\nparams: [not logged]');
    expect(logged.stack).toContain('params: [not logged]\n    at ');
    expect(JSON.stringify(logged)).not.toMatch(/Zelda|Quux/);
  });

  it('scrubs the causes too', () => {
    const err = new Error('delivery failed', { cause: new Error('rejected <a@b.example>') });
    expect((safeError(err).cause as { message: string }).message).toBe('rejected <[e-mail]>');
  });

  it("keeps an error's codes and drops the free text a library put in members of its own", () => {
    const smtp = Object.assign(new Error('Message failed'), {
      code: 'EENVELOPE',
      responseCode: 550,
      command: 'RCPT TO',
      response: '550 5.1.1 <h.gallowglass@mail.example>: mailbox of Henrietta Gallowglass disabled',
      rejected: ['h.gallowglass@mail.example'],
      rejectedErrors: [{ recipient: 'h.gallowglass@mail.example', response: '550 mailbox of Henrietta disabled' }],
      body: Buffer.from('Henrietta'),
    });
    const logged = safeError(smtp);
    expect(logged).toMatchObject({ code: 'EENVELOPE', responseCode: 550, rejected: ['[e-mail]'] });
    expect(logged.response).toBe('[not logged]');
    expect(logged.body).toBe('[not logged]');
    expect(JSON.stringify(logged)).not.toMatch(/gallowglass|Henrietta/i);
    // A database error keeps the server's own words (its hint), as before.
    const pgError = Object.assign(new Error('function f(text) does not exist'), {
      code: '42883',
      severity: 'ERROR',
      hint: 'No function matches the given name and argument types.',
    });
    expect(safeError(pgError)).toMatchObject({ code: '42883', severity: 'ERROR', hint: pgError.hint });
  });

  it('walks a cause that is not an Error, and keeps a hint only from PostgreSQL', () => {
    const relay = new Error('send failed', { cause: { response: '550 mailbox of Jane Doe disabled', code: 550 } });
    expect(safeError(relay).cause).toEqual({ response: '[not logged]', code: 550 });
    const library = Object.assign(new Error('request failed'), { hint: 'Patient Jane Doe has no address on file' });
    expect(safeError(library).hint).toBe('[not logged]');
  });
});
