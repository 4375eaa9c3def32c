/**
 * Whether the screen is phone-sized (≤ 640 px, the app's one small-screen breakpoint), and whether the device is
 * touch-first (its main pointer is a finger: no Shift+Enter on its keyboard), following changes.
 */
import { useEffect, useState } from 'react';

export const PHONE = '(max-width: 640px)';
export const TOUCH_FIRST = '(pointer: coarse)';

function useMedia(query: string): boolean {
  const [matches, setMatches] = useState(() => window.matchMedia(query).matches);
  useEffect(() => {
    const list = window.matchMedia(query);
    const update = () => setMatches(list.matches);
    update();
    list.addEventListener('change', update);
    return () => list.removeEventListener('change', update);
  }, [query]);
  return matches;
}

export function usePhone(): boolean {
  return useMedia(PHONE);
}

/** A finger is the main pointer (`(pointer: coarse)`): a message box's Enter makes a new line and Send sends. */
export function useTouchFirst(): boolean {
  return useMedia(TOUCH_FIRST);
}
