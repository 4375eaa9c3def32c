/**
 * "Revoke this token?" for the admin tokens page and the account page. A refusal is said in the dialog, which stays
 * open (it used to close without a word); a token revoked meanwhile elsewhere (404) is said to be gone already, and
 * the lists are read again.
 */
import { type UseMutationResult, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ApiError } from '../../api.js';
import { ConfirmDialog } from '../../components/ui/dialog.js';
import { notifySuccess } from '../../components/ui/toast.js';
import { formatDateTime } from '../patients/patients-api.js';
import { type ApiToken, adminKeys } from './admin-api.js';

/** The end of a token's id, which tells apart tokens of one name (the audit log has the whole id). */
export const tokenIdSuffix = (token: Pick<ApiToken, 'id'>) => `…${token.id.slice(-6)}`;

/** When it was last used, in words ("Never used" for a token no request has carried yet). */
export const lastUsedWords = (token: Pick<ApiToken, 'lastUsedAt'>) =>
  token.lastUsedAt ? `Last used ${formatDateTime(token.lastUsedAt)}` : 'Never used';

/**
 * After the dialog closes: when the focus had nowhere to go back to (the token's row went with the revoke), it goes
 * to `fallback` (the page's title) rather than falling to the page.
 */
export function refocusIfLost(fallback: { current: HTMLElement | null }) {
  // After React Aria has given the focus back to the opener, if that is still there.
  setTimeout(() => {
    const active = document.activeElement;
    if (!active || active === document.body || !active.isConnected) fallback.current?.focus();
  }, 50);
}

/**
 * Open while `token` is set (a page has one of these, not one per row, so a list read again without the token
 * leaves the dialog open with what it says). Made afresh per token: give it `key={token?.id}`.
 */
export function RevokeTokenDialog({
  token,
  title,
  revoke,
  onClose,
}: {
  token: ApiToken | null;
  title: string;
  revoke: UseMutationResult<unknown, Error, string>;
  onClose: () => void;
}) {
  const queryClient = useQueryClient();
  const [gone, setGone] = useState(false);
  const name = token ? `“${token.name}”` : 'The token';
  const error = gone
    ? new Error(`${name} was revoked meanwhile (in another tab, or by an admin). It is no longer listed.`)
    : (revoke.error ?? undefined);
  return (
    <ConfirmDialog
      title={title}
      description={
        token
          ? `Token ${tokenIdSuffix(token)}, created ${formatDateTime(token.createdAt)}. Anything using it gets 401 from the next request.`
          : ''
      }
      confirmLabel="Revoke"
      isOpen={token !== null}
      onOpenChange={(open) => {
        if (!open) onClose();
      }}
      pending={revoke.isPending}
      confirmTestId="confirm-revoke"
      error={error}
      errorTitle={gone ? 'Already revoked' : `${name} was not revoked`}
      canConfirm={!gone}
      cancelLabel={gone ? 'Close' : 'Cancel'}
      onConfirm={() => {
        if (!token) return;
        revoke.mutate(token.id, {
          onSuccess: () => {
            onClose();
            notifySuccess(`Token ${name} revoked.`);
          },
          onError: (failure) => {
            if (!(failure instanceof ApiError && failure.status === 404)) return;
            setGone(true);
            void Promise.all([
              queryClient.invalidateQueries({ queryKey: adminKeys.adminTokens }),
              queryClient.invalidateQueries({ queryKey: adminKeys.myTokens }),
            ]);
          },
        });
      }}
    />
  );
}
