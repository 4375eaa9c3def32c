/**
 * A secret shown exactly once, with a copy button. It takes the keyboard focus when it appears (on Copy),
 * and gives it back to where the user was when it is dismissed.
 */
import { useEffect, useRef, useState } from 'react';
import { Button } from '../../components/ui/button.js';

export function SecretReveal({ title, secret, onDismiss }: { title: string; secret: string; onDismiss: () => void }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const copyButton = useRef<HTMLButtonElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new secret (another endpoint, a rotation) is shown afresh.
  useEffect(() => {
    const active = document.activeElement;
    if (active instanceof HTMLElement && active !== document.body && !active.closest('[data-testid="secret-reveal"]'))
      opener.current = active;
    copyButton.current?.focus();
  }, [secret]);
  const dismiss = () => {
    const back = opener.current;
    onDismiss();
    // Back where the user was (the form's button, the Rotate secret button), else to the page.
    requestAnimationFrame(() => {
      if (back?.isConnected) back.focus();
      else document.getElementById('main')?.focus();
    });
  };
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
        <button
          ref={copyButton}
          type="button"
          className="button button-secondary button-small"
          onClick={copy}
          data-testid="copy-secret"
        >
          {copied === 'yes' ? 'Copied' : 'Copy'}
        </button>
      </div>
      {copied === 'failed' ? <p className="field-error">Copying failed; select the text and copy it by hand.</p> : null}
      <div className="form-actions">
        <Button variant="secondary" onPress={dismiss} data-testid="secret-stored">
          I have stored it
        </Button>
      </div>
    </div>
  );
}
