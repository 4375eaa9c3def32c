/**
 * Whether the keyboard focus is nowhere a user can see: on the page's body (its element was removed or
 * disabled), on an element no longer in the document, or on one just hidden (a phone's list giving way to
 * its thread). Pages that move the focus after a change ask this first, so focus placed on purpose stays.
 */
export function focusLost(): boolean {
  const active = document.activeElement as HTMLElement | null;
  return !active || active === document.body || !active.isConnected || !active.checkVisibility();
}
