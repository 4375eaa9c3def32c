/** Background outcomes ("Invitation sent", "Delivery queued") as toasts; the Toaster is in the root layout. */
import { toast } from 'sonner';
import { describeError, isWorkspaceChanged } from '../../api.js';

export function notifySuccess(message: string, description?: string): void {
  toast.success(message, { description });
}

export function notifyError(
  error: unknown,
  title = 'That did not work',
  describe: (error: unknown) => string = describeError,
): void {
  // The page has given way to the one notice saying the workspace changed in another tab.
  if (isWorkspaceChanged(error)) return;
  toast.error(title, { description: describe(error) });
}

/** News that needs no answer ("New message from …"), politely announced; `id` replaces an earlier toast with the same id. */
export function notifyInfo(
  message: string,
  options: { description?: string; id?: string; action?: { label: string; onClick: () => void } } = {},
): void {
  toast.info(message, options);
}
