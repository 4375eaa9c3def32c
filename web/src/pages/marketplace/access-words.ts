/** A skill's access (its scope ids, contract §4) in the words a clinic uses; the ids stay secondary detail. */
const SCOPE_WORDS: Record<string, string> = {
  'patients:read': 'See patient records',
  'patients:write': 'Add and change patient records',
  'billing:read': 'See insurance and billing',
  'billing:write': 'Record insurance and billing',
  'mail:read': 'Read the workspace’s e-mail',
  'mail:send': 'Send e-mail',
  'drive:read': 'Open files in the shared drive',
  'drive:write': 'Save files to the shared drive',
};

/** "patients:read" → "See patient records"; an id it does not know stays as it is. */
export function scopeWords(scope: string): string {
  return SCOPE_WORDS[scope] ?? scope;
}

/** Several scopes as one phrase: "See patient records and see insurance and billing". */
export function scopesInWords(scopes: string[]): string {
  const words = scopes.map((s) => scopeWords(s).toLowerCase());
  if (words.length === 0) return 'no access to workspace data';
  const sentence = words.length === 1 ? words[0] : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}
