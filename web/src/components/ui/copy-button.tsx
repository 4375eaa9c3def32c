/**
 * Copies a value (a webhook URL, a token) to the clipboard and says so in a toast; where the browser does not
 * allow it, says to select the text and copy it by hand. Its accessible name says what it copies.
 */

import { Button } from './button.js';
import { notifyError, notifySuccess } from './toast.js';

export function CopyButton({ text, label, testId }: { text: string; label: string; testId?: string }) {
  return (
    <Button
      variant="secondary"
      size="small"
      aria-label={`Copy ${label}`}
      data-testid={testId}
      onPress={() => {
        if (!navigator.clipboard) {
          notifyError(new Error('Select the text and copy it by hand.'), 'This browser does not allow copying here');
          return;
        }
        navigator.clipboard.writeText(text).then(
          () => notifySuccess(`${label.charAt(0).toUpperCase()}${label.slice(1)} copied.`),
          () => notifyError(new Error('Select the text and copy it by hand.'), 'Copying failed'),
        );
      }}
    >
      Copy
    </Button>
  );
}
