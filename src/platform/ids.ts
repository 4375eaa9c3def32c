import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

function encodeTime(ms: number): string {
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

let lastMs = 0;
let lastRandom: number[] = [];

/** Opaque, time-sortable identifier with a type prefix (ULID body), e.g. `ws_01j…`. */
export function newId(prefix: string): string {
  const now = Date.now();
  let rand: number[];
  if (now === lastMs && lastRandom.length === 16) {
    // Same millisecond: increment the random part so ids stay strictly increasing.
    rand = [...lastRandom];
    for (let i = 15; i >= 0; i--) {
      if (rand[i] < 31) {
        rand[i]++;
        break;
      }
      rand[i] = 0;
    }
  } else {
    const bytes = randomBytes(16);
    rand = Array.from(bytes, (b) => b % 32);
  }
  lastMs = now;
  lastRandom = rand;
  return `${prefix}_${encodeTime(now)}${rand.map((n) => ALPHABET[n]).join('')}`;
}
