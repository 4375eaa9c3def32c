/**
 * Words typed but not sent, per conversation: a reply half-written to one patient is still there after reading
 * another conversation (the Inbox) or another staff thread (Messages). Kept in this tab's memory only, never in
 * browser storage (the words are about patients), and forgotten on sign-in and sign-out (`forgetDrafts`), so a
 * person who signs in after another on a shared computer never sees them. A reload forgets them too.
 */
import { useCallback, useState } from 'react';

const drafts = new Map<string, unknown>();

/**
 * Like `useState`, kept under `key` while the component is away (a null key: not kept); `empty(value)` drafts are
 * not kept.
 */
export function useDraft<T>(key: string | null, initial: T, empty: (value: T) => boolean): [T, (next: T) => void] {
  const [value, setValue] = useState<T>(() => (key !== null && drafts.has(key) ? (drafts.get(key) as T) : initial));
  const set = useCallback(
    (next: T) => {
      setValue(next);
      if (key === null) return;
      if (empty(next)) drafts.delete(key);
      else drafts.set(key, next);
    },
    [key, empty],
  );
  return [value, set];
}

/** Every kept draft is dropped (the session changed hands). */
export function forgetDrafts(): void {
  drafts.clear();
}

/**
 * A send is under way: the kept draft is dropped at once (an opening of the conversation meanwhile shows an empty
 * box, never words already on their way), and `failed()` keeps them again if the send did not go through (unless
 * something new was typed and kept meanwhile). The box itself is the caller's to clear once sent.
 */
export function sending(key: string | null, value: unknown): { failed: () => void } {
  if (key !== null) drafts.delete(key);
  return {
    failed: () => {
      if (key !== null && !drafts.has(key)) drafts.set(key, value);
    },
  };
}
