/** A tiny client-side router on the History API: paths like `/patients/:patientId`, no hash. */
import { type AnchorHTMLAttributes, type MouseEvent, useSyncExternalStore } from 'react';

const listeners = new Set<() => void>();

function notify(): void {
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (listeners.size === 1) window.addEventListener('popstate', notify);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) window.removeEventListener('popstate', notify);
  };
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const current = `${window.location.pathname}${window.location.search}`;
  if (to === current) return;
  if (options.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  notify();
}

export function usePathname(): string {
  return useSyncExternalStore(
    subscribe,
    () => window.location.pathname,
    () => '/',
  );
}

export type RouteParams = Record<string, string>;

/** Matches `/a/:id` against a pathname; returns the decoded params or null. Trailing slashes are ignored. */
export function matchPath(pattern: string, pathname: string): RouteParams | null {
  const want = pattern.split('/').filter(Boolean);
  const have = pathname.split('/').filter(Boolean);
  if (want.length !== have.length) return null;
  const params: RouteParams = {};
  for (let i = 0; i < want.length; i++) {
    const segment = want[i];
    if (segment.startsWith(':')) {
      try {
        params[segment.slice(1)] = decodeURIComponent(have[i]);
      } catch {
        return null;
      }
    } else if (segment !== have[i]) {
      return null;
    }
  }
  return params;
}

/** True when `pathname` is `base` or below it (`/patients` is active on `/patients/pat_1`). */
export function isWithin(base: string, pathname: string): boolean {
  return pathname === base || pathname.startsWith(`${base.replace(/\/$/, '')}/`);
}

type LinkProps = Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> & { to: string };

/** An anchor that navigates client-side on a plain left click and behaves natively otherwise. */
export function Link({ to, onClick, ...rest }: LinkProps) {
  const handleClick = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    if (rest.target && rest.target !== '_self') return;
    event.preventDefault();
    navigate(to);
  };
  return <a href={to} onClick={handleClick} {...rest} />;
}
