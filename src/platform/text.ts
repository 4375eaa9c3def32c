// Text from outside (a provider's message, an e-mail) as it may be stored: PostgreSQL's text holds
// no NUL and UTF-8 holds no unpaired surrogate, and the other C0 controls only garble a screen.

/** Well-formed UTF-16 with C0 controls (but tab and newlines) and DEL removed. */
export function storableText(text: string): string {
  const wellFormed = (text as string & { toWellFormed(): string }).toWellFormed();
  let out = '';
  for (const ch of wellFormed) {
    const c = ch.codePointAt(0) ?? 0;
    if ((c >= 0x20 && c !== 0x7f) || c === 0x09 || c === 0x0a || c === 0x0d) out += ch;
  }
  return out;
}
