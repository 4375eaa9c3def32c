// The log lines an app writes, as a log shipper would receive them: for tests that a log never carries
// patient data (contract §1, convention 16).
import { Writable } from 'node:stream';

export interface CapturedLogs {
  stream: Writable;
  /** Every line written so far (JSON, one per entry). */
  lines: string[];
  /** All lines as one text, to search for what must not be there. */
  text(): string;
}

export function captureLogs(): CapturedLogs {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines, text: () => lines.join('\n') };
}
