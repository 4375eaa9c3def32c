import type { ReactNode } from 'react';

/** Placeholder for pages not built yet, shown inside the shell. */
export function ComingSoonPage({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <h1 id="page-title">{title}</h1>
      </header>
      <div className="state state-empty coming-soon" data-testid="coming-soon">
        <p className="state-title">Coming soon</p>
        {children ? <p className="muted">{children}</p> : null}
      </div>
    </section>
  );
}
