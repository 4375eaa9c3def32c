import { Shell } from './components/shell.js';
import { FullPageError, FullPageLoading } from './components/status.js';
import { SignInPage } from './pages/sign-in/sign-in-page.js';
import { useMe } from './session.js';

/** Signed in → the shell; no session → sign-in (on whatever path was asked for, so deep links survive). */
export function App() {
  const me = useMe();
  if (me.data) return <Shell me={me.data} />;
  if (me.data === null) return <SignInPage />;
  if (me.isError) return <FullPageError error={me.error} onRetry={() => me.refetch()} />;
  return <FullPageLoading label="Loading Atrium…" />;
}
