/** The one TanStack Query client: a 401 anywhere signs the browser out; client errors are not retried. */
import { MutationCache, QueryCache, QueryClient } from '@tanstack/react-query';
import { ApiError } from './api.js';
import { markSignedOut } from './session.js';

const isUnauthenticated = (error: unknown) => error instanceof ApiError && error.status === 401;

export const queryClient: QueryClient = new QueryClient({
  // A 401 anywhere means the session ended (expired, signed out elsewhere): go back to sign-in.
  queryCache: new QueryCache({
    onError: (error) => {
      if (isUnauthenticated(error)) markSignedOut(queryClient);
    },
  }),
  mutationCache: new MutationCache({
    onError: (error, _variables, _context, mutation) => {
      if (isUnauthenticated(error) && !mutation.meta?.expectsUnauthenticated) markSignedOut(queryClient);
    },
  }),
  defaultOptions: {
    queries: {
      staleTime: 15_000,
      refetchOnWindowFocus: false,
      // Client errors will not get better by asking again.
      retry: (failureCount, error) =>
        !(error instanceof ApiError && error.status >= 400 && error.status < 500) && failureCount < 2,
    },
  },
});
