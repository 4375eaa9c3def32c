/** Shared loading, empty and error states. */
import type { ReactNode } from 'react';
import { ApiError, describeError } from '../api.js';

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

/** "Load more" footer for a TanStack infinite query; renders nothing when there is no next page. */
export function LoadMore({
  query,
}: {
  query: { hasNextPage: boolean; isFetchingNextPage: boolean; fetchNextPage: () => unknown };
}) {
  if (!query.hasNextPage) return null;
  return (
    <div className="table-footer">
      <button
        type="button"
        className="button button-secondary"
        onClick={() => query.fetchNextPage()}
        disabled={query.isFetchingNextPage}
      >
        {query.isFetchingNextPage ? 'Loading…' : 'Load more'}
      </button>
    </div>
  );
}
