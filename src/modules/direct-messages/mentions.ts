// Dependency-free: the web app imports it too.
/** `@patient:<id>` tokens; the id runs until a character that cannot be part of an id. */
const MENTION = /@patient:([A-Za-z0-9_-]{1,100})/g;

/** Distinct patient ids mentioned in a message body, in order of first appearance. */
export function parsePatientMentions(body: string): string[] {
  const seen = new Set<string>();
  for (const match of body.matchAll(MENTION)) seen.add(match[1]);
  return [...seen];
}

/** Splits a body into text and mention parts (for renderers). */
export function splitMentions(body: string): ({ text: string } | { patientId: string })[] {
  const parts: ({ text: string } | { patientId: string })[] = [];
  let last = 0;
  for (const match of body.matchAll(MENTION)) {
    const at = match.index ?? 0;
    if (at > last) parts.push({ text: body.slice(last, at) });
    parts.push({ patientId: match[1] });
    last = at + match[0].length;
  }
  if (last < body.length) parts.push({ text: body.slice(last) });
  return parts;
}
