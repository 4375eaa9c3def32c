/** "Forgot password?": asks for the e-mail and always answers the same (no account enumeration). */
import { useEffect, useRef, useState } from 'react';
import { z } from 'zod';
import { api } from '../../api.js';
import { Button } from '../../components/ui/button.js';
import { AppDialog } from '../../components/ui/dialog.js';
import { applyProblem, FormError, TextInput, useZodForm } from '../../components/ui/form.js';

const form = z.object({
  email: z.string().trim().min(1, 'Enter your e-mail address').email('Enter an e-mail address like name@example.com'),
});

export function ForgotPassword() {
  const [open, setOpen] = useState(false);
  const [sentTo, setSentTo] = useState<string | null>(null);
  const f = useZodForm(form, { defaultValues: { email: '' } });
  // The form (and the button that had the focus) goes away: the answer takes the focus, so the
  // dialog keeps it (Escape still closes it, a screen reader reads the answer).
  const sentRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (sentTo) sentRef.current?.focus();
  }, [sentTo]);
  const onSubmit = f.handleSubmit((values) =>
    api
      .post('/auth/password-reset', { email: values.email })
      .then(() => setSentTo(values.email))
      .catch((error) => applyProblem(f, error)),
  );
  return (
    <>
      <Button variant="ghost" className="forgot-link" onPress={() => setOpen(true)} data-testid="forgot-password">
        Forgot password?
      </Button>
      <AppDialog
        title="Reset your password"
        isOpen={open}
        onOpenChange={(next) => {
          setOpen(next);
          if (!next) {
            setSentTo(null);
            f.reset();
          }
        }}
        testId="forgot-dialog"
      >
        {sentTo ? (
          <div
            className="notice notice-success"
            role="status"
            data-testid="reset-requested"
            tabIndex={-1}
            ref={sentRef}
          >
            <p>
              If {sentTo} belongs to an Atrium account, a link to choose a new password is on its way. It works once,
              for one hour.
            </p>
          </div>
        ) : (
          <form className="form" onSubmit={onSubmit} noValidate>
            <p className="muted">We e-mail you a link to choose a new password.</p>
            <FormError message={f.formState.errors.root?.message} />
            <TextInput
              control={f.control}
              name="email"
              label="E-mail"
              type="email"
              autoComplete="username"
              isRequired
            />
            <div className="form-actions">
              <Button type="submit" isDisabled={f.formState.isSubmitting} data-testid="send-reset">
                Send reset link
              </Button>
            </div>
          </form>
        )}
      </AppDialog>
    </>
  );
}
