/** The centred card that public pages (sign-in, invitation, password reset) sit in. */
import type { ReactNode } from 'react';

export function PublicCard({ title, intro, children }: { title: string; intro?: ReactNode; children: ReactNode }) {
  return (
    <main className="sign-in" id="main">
      <div className="sign-in-card card">
        <div className="sign-in-brand">
          <span className="brand-mark" aria-hidden="true">
            A
          </span>
          <span className="brand-name">Atrium</span>
        </div>
        <h1>{title}</h1>
        {intro ? <p className="muted">{intro}</p> : null}
        {children}
      </div>
    </main>
  );
}
