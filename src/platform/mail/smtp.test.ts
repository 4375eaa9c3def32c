import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { safeError } from '../log-safety.js';
import { SmtpRelayError, smtpTransport } from './mailer.js';

/**
 * A minimal SMTP receiver speaking the real protocol (RFC 5321), so the nodemailer adapter is exercised on the wire.
 * It refuses a recipient whose address starts with `gone.` as Postfix does, quoting the address and the name.
 */
function startSmtpReceiver(): Promise<{
  server: Server;
  port: number;
  messages: { from: string; to: string[]; data: string }[];
}> {
  const messages: { from: string; to: string[]; data: string }[] = [];
  const server = createServer((socket) => {
    let buffer = '';
    let inData = false;
    let current = { from: '', to: [] as string[], data: '' };
    socket.write('220 test ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          current.data = buffer.slice(0, end);
          buffer = buffer.slice(end + 5);
          inData = false;
          messages.push(current);
          current = { from: '', to: [], data: '' };
          socket.write('250 OK queued\r\n');
          continue;
        }
        const nl = buffer.indexOf('\r\n');
        if (nl < 0) return;
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250-test\r\n250 8BITMIME\r\n');
        else if (verb === 'MAIL') current.from = /<([^>]*)>/.exec(line)?.[1] ?? '';
        else if (verb === 'RCPT') {
          const to = /<([^>]*)>/.exec(line)?.[1] ?? '';
          if (to.startsWith('gone.')) {
            socket.write(
              `550 5.1.1 <${to}>: Recipient address rejected: mailbox of Henrietta Gallowglass disabled\r\n`,
            );
            continue;
          }
          current.to.push(to);
        }
        if (verb === 'MAIL' || verb === 'RCPT' || verb === 'RSET' || verb === 'NOOP') socket.write('250 OK\r\n');
        else if (verb === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (verb === 'QUIT') {
          socket.end('221 bye\r\n');
        }
      }
    });
  });
  server.listen(0, '127.0.0.1');
  return once(server, 'listening').then(() => ({
    server,
    port: (server.address() as { port: number }).port,
    messages,
  }));
}

let receiver: Awaited<ReturnType<typeof startSmtpReceiver>>;
beforeAll(async () => {
  receiver = await startSmtpReceiver();
});
afterAll(() => receiver?.server.close());

describe('SMTP transport (SMTP_URL)', () => {
  it('delivers the message over SMTP with envelope, headers and attachments', async () => {
    const transport = smtpTransport(`smtp://127.0.0.1:${receiver.port}?ignoreTLS=true`);
    await transport.send('Atrium <no-reply@atrium.local>', {
      to: ['a@example.test', 'b@example.test'],
      subject: 'Dead-lettered event',
      text: 'Body text',
      attachments: [{ filename: 'invite.ics', contentType: 'text/calendar', content: 'BEGIN:VCALENDAR' }],
    });
    expect(receiver.messages).toHaveLength(1);
    const [message] = receiver.messages;
    expect(message.from).toBe('no-reply@atrium.local');
    expect(message.to).toEqual(['a@example.test', 'b@example.test']);
    expect(message.data).toContain('Subject: Dead-lettered event');
    expect(message.data).toContain('invite.ics');
  });

  it("a relay's refusal reaches the logs with its codes only, never the recipient's address or name (contract §1)", async () => {
    const transport = smtpTransport(`smtp://127.0.0.1:${receiver.port}?ignoreTLS=true`);
    const err = await transport
      .send('Atrium <no-reply@atrium.local>', {
        to: ['gone.h.gallowglass@mail.example'],
        subject: 'Your appointment',
        text: 'Body text',
      })
      .catch((e: unknown) => e);
    // What the logger's err serializer writes (a failed mail.send job logs its error; the job row keeps the message).
    const logged = JSON.stringify(safeError(err as Error));
    expect(logged).toContain('550');
    expect(logged).not.toMatch(/gallowglass|Henrietta/i);
    expect(err).toBeInstanceOf(SmtpRelayError);
    expect((err as Error).message).toBe('SMTP relay answered 550 5.1.1 to RCPT TO (1 of 1 recipients refused)');
  });
});
