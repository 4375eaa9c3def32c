/** Shared loading, empty and error states. */

import { type ReactNode, useEffect, useRef, useState } from 'react';
import { ApiError, describeError } from '../api.js';
import { focusLost } from './focus.js';
import { Button } from './ui/button.js';

export function Spinner() {
  return <span className="spinner" aria-hidden="true" />;
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div className="state state-loading" role="status" data-testid="loading">
      <Spinner />
      <span>{label}</span>
    </div>
  );
}

export function EmptyState({ title, children, action }: { title: string; children?: ReactNode; action?: ReactNode }) {
  return (
    <div className="state state-empty" data-testid="empty-state">
      <p className="state-title">{title}</p>
      {children ? <p className="muted">{children}</p> : null}
      {action}
    </div>
  );
}

/** An error from the API (or anything else) shown as an alert, with its request id for support. */
export function ErrorNotice({
  error,
  title,
  onRetry,
  testId = 'error-notice',
}: {
  error: unknown;
  title?: string;
  onRetry?: () => void;
  testId?: string;
}) {
  const requestId = error instanceof ApiError ? error.requestId : undefined;
  return (
    <div className="notice notice-error" role="alert" data-testid={testId}>
      {title ? <p className="notice-title">{title}</p> : null}
      <p>{describeError(error)}</p>
      {requestId ? <p className="notice-meta">Request id: {requestId}</p> : null}
      {onRetry ? (
        <button type="button" className="button button-secondary" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

export function SuccessNotice({ children, onDismiss }: { children: ReactNode; onDismiss?: () => void }) {
  return (
    <div className="notice notice-success" role="status" data-testid="success-notice">
      <p>{children}</p>
      {onDismiss ? (
        <button type="button" className="button-link" onClick={onDismiss} aria-label="Dismiss">
          ×
        </button>
      ) : null}
    </div>
  );
}

export function FullPageLoading({ label }: { label?: string }) {
  return (
    <div className="full-page">
      <Loading label={label} />
    </div>
  );
}

export function FullPageError({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  return (
    <div className="full-page">
      <div className="card full-page-card">
        <ErrorNotice error={error} title="Atrium could not load" onRetry={onRetry} />
      </div>
    </div>
  );
}

/**
 * "Load more" footer for a TanStack infinite query; renders nothing when there is no next page (and none
 * was loaded here). The button is pending, never disabled, while a page loads: a disabled button drops the
 * keyboard focus to the page. A second press meanwhile is ignored. How many rows arrived is said politely;
 * when the last page came, the button goes and the focus (had it fallen to the page) moves to the words
 * saying so, in the same place.
 */
const ROWS = ['row', 'rows'] as const;

export function LoadMore({
  query,
  noun = ROWS,
}: {
  query: {
    hasNextPage: boolean;
    isFetchingNextPage: boolean;
    fetchNextPage: () => unknown;
    data?: { pages: readonly { items: readonly unknown[] }[] };
  };
  /** What a row is, one and several: "50 more entries loaded". */
  noun?: readonly [string, string];
}) {
  const pages = query.data?.pages;
  const total = pages?.reduce((sum, page) => sum + page.items.length, 0) ?? 0;
  // How many rows there were when Load more was pressed, until that page has come (or failed).
  const asked = useRef<number | null>(null);
  const [said, setSaid] = useState<{ text: string; last: boolean; focus: boolean } | null>(null);
  const endNote = useRef<HTMLSpanElement>(null);
  const { isFetchingNextPage, hasNextPage } = query;

  useEffect(() => {
    const before = asked.current;
    if (before === null || isFetchingNextPage) return;
    asked.current = null;
    const added = total - before;
    if (added <= 0) return; // It failed: the page shows why.
    const what = `${added} more ${added === 1 ? noun[0] : noun[1]} loaded`;
    setSaid(
      hasNextPage
        ? { text: `${what}, ${total} in all.`, last: false, focus: false }
        : { text: `${what}: all ${total} are shown.`, last: true, focus: focusLost() },
    );
  }, [isFetchingNextPage, hasNextPage, total, noun]);

  // The list started again (another filter): what was said is about the old one.
  const pageCount = pages?.length ?? 0;
  useEffect(() => {
    if (pageCount <= 1) setSaid(null);
  }, [pageCount]);

  useEffect(() => {
    if (said?.focus) endNote.current?.focus();
  }, [said]);

  if (!hasNextPage && !said?.last) return null;
  return (
    <div className="table-footer">
      {/* Read when it changes; the words of the last page are read by taking the focus instead, when they do. */}
      <span className="visually-hidden" role="status" data-testid="load-more-status">
        {said && !said.focus ? said.text : ''}
      </span>
      {hasNextPage ? (
        <Button
          variant="secondary"
          isPending={isFetchingNextPage}
          onPress={() => {
            if (asked.current !== null) return;
            asked.current = total;
            query.fetchNextPage();
          }}
          data-testid="load-more"
        >
          {isFetchingNextPage ? 'Loading…' : 'Load more'}
        </Button>
      ) : (
        <span className="muted" tabIndex={-1} ref={endNote} data-testid="load-more-end">
          {said?.text}
        </span>
      )}
    </div>
  );
}
