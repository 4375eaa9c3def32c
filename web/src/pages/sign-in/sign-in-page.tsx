/** Sign in with e-mail and password; a session cookie is set and the shell takes over. */

import { type FormEvent, useEffect, useState } from 'react';
import { flushSync } from 'react-dom';
import { z } from 'zod';
import { ApiError, describeError } from '../../api.js';
import { FormField } from '../../components/form-field.js';
import { Spinner } from '../../components/status.js';
import { useSignIn } from '../../session.js';
import { ForgotPassword } from './forgot-password.js';

function signInMessage(error: unknown): { title: string; text: string } {
  if (error instanceof ApiError) {
    if (error.status === 401)
      return { title: 'Could not sign you in', text: error.detail || 'Wrong e-mail or password.' };
    if (error.status === 429) return { title: 'Too many attempts', text: describeError(error) };
    if (error.status === 400) return { title: 'Check the form', text: 'Enter an e-mail address and your password.' };
  }
  return { title: 'Sign-in failed', text: describeError(error) };
}

export function SignInPage() {
  const signIn = useSignIn();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [missing, setMissing] = useState(false);
  const [malformed, setMalformed] = useState(false);

  useEffect(() => {
    document.title = 'Sign in · Atrium';
  }, []);

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (signIn.isPending) return;
    const form = event.currentTarget;
    // A field the form refuses takes the focus, once it is marked invalid and linked to the message (flushSync).
    const focusField = (name: 'email' | 'password') => {
      const field = form.elements.namedItem(name);
      if (field instanceof HTMLInputElement) field.focus();
    };
    const incomplete = !email.trim() || !password;
    flushSync(() => {
      setMissing(incomplete);
      setMalformed(false);
      if (incomplete) signIn.reset();
    });
    if (incomplete) return focusField(email.trim() ? 'password' : 'email');
    // An address that cannot be one is said in words before anything is sent (the same check as the reset dialog's).
    const wellFormed = z.string().email().safeParse(email.trim()).success;
    flushSync(() => {
      setMalformed(!wellFormed);
      if (!wellFormed) signIn.reset();
    });
    if (!wellFormed) return focusField('email');
    signIn.mutate({ email: email.trim(), password });
  };
  const emailInvalid = (missing && !email.trim()) || malformed;
  const passwordInvalid = missing && !password;

  const message = missing
    ? { title: 'Check the form', text: 'Enter your e-mail and password.' }
    : malformed
      ? { title: 'Check the form', text: 'Enter an e-mail address like name@example.com.' }
      : signIn.isError
        ? signInMessage(signIn.error)
        : null;

  return (
    <main className="sign-in" id="main">
      <div className="sign-in-card card">
        <div className="sign-in-brand">
          <span className="brand-mark" aria-hidden="true">
            A
          </span>
          <span className="brand-name">Atrium</span>
        </div>
        <h1>Sign in</h1>
        <p className="muted">Use the e-mail and password of your Atrium account.</p>
        <form onSubmit={onSubmit} noValidate aria-describedby={message ? 'sign-in-error' : undefined}>
          {message ? (
            <div className="notice notice-error" role="alert" id="sign-in-error" data-testid="sign-in-error">
              <p className="notice-title">{message.title}</p>
              <p id="sign-in-error-text">{message.text}</p>
            </div>
          ) : null}
          <FormField
            label="E-mail"
            name="email"
            type="email"
            autoComplete="username"
            required
            autoFocus
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            aria-invalid={emailInvalid || undefined}
            aria-describedby={emailInvalid ? 'sign-in-error-text' : undefined}
          />
          <FormField
            label="Password"
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            aria-invalid={passwordInvalid || undefined}
            aria-describedby={passwordInvalid ? 'sign-in-error-text' : undefined}
          />
          <button
            type="submit"
            className="button button-primary button-block"
            // Not disabled while signing in (the focus would drop to the page): a second press is ignored instead.
            aria-disabled={signIn.isPending || undefined}
            data-testid="sign-in-submit"
          >
            {signIn.isPending ? (
              <>
                <Spinner /> Signing in…
              </>
            ) : (
              'Sign in'
            )}
          </button>
        </form>
        <ForgotPassword />
      </div>
    </main>
  );
}
