/** A secret shown exactly once, with a copy button. */
import { useState } from 'react';
import { Button } from '../../components/ui/button.js';

export function SecretReveal({ title, secret, onDismiss }: { title: string; secret: string; onDismiss: () => void }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <div className="notice notice-info secret-reveal" role="status" data-testid="secret-reveal">
      <p className="notice-title">{title}</p>
      <p>Copy the signing secret now: it is shown only this once. Receivers use it to verify our signatures.</p>
      <div className="secret-row">
        <code className="secret-value" data-testid="endpoint-secret">
          {secret}
        </code>
        <button type="button" className="button button-secondary button-small" onClick={copy} data-testid="copy-secret">
          {copied === 'yes' ? 'Copied' : 'Copy'}
        </button>
      </div>
      {copied === 'failed' ? <p className="field-error">Copying failed; select the text and copy it by hand.</p> : null}
      <div className="form-actions">
        <Button variant="secondary" onPress={onDismiss} data-testid="secret-stored">
          I have stored it
        </Button>
      </div>
    </div>
  );
}
