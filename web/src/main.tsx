import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ApiError } from './api.js';
import { App } from './app.js';
import { markSignedOut } from './session.js';
import './styles/base.css';
import './styles/layout.css';
import './styles/components.css';

const isUnauthenticated = (error: unknown) => error instanceof ApiError && error.status === 401;

const queryClient: QueryClient = new QueryClient({
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

const container = document.getElementById('root');
if (!container) throw new Error('index.html lacks #root');

createRoot(container).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
