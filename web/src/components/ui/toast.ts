/** Background outcomes ("Invitation sent", "Delivery queued") as toasts; the Toaster is in the root layout. */
import { toast } from 'sonner';
import { describeError } from '../../api.js';

export function notifySuccess(message: string, description?: string): void {
  toast.success(message, { description });
}

export function notifyError(
  error: unknown,
  title = 'That did not work',
  describe: (error: unknown) => string = describeError,
): void {
  toast.error(title, { description: describe(error) });
}
