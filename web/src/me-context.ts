/** The signed-in member, provided by the root layout to every page below it. */
import { createContext, useContext } from 'react';
import type { Me } from './session.js';

export const MeContext = createContext<Me | null>(null);

/** The current member; only valid inside signed-in pages (the root layout guarantees it). */
export function useCurrentMe(): Me {
  const me = useContext(MeContext);
  if (!me) throw new Error('useCurrentMe outside a signed-in page');
  return me;
}

/** The current member, or null on public pages (invitation, password reset) and while signed out. */
export function useOptionalMe(): Me | null {
  return useContext(MeContext);
}
