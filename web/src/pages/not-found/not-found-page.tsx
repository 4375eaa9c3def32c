import { Link } from '@tanstack/react-router';
import { HOME_PATH } from '../../router.js';

export function NotFoundPage() {
  return (
    <section className="page" aria-labelledby="page-title">
      <h1 id="page-title">Page not found</h1>
      <div className="state state-empty" data-testid="not-found">
        <p className="state-title">There is nothing at this address.</p>
        <Link to={HOME_PATH} className="button button-secondary">
          Go to Patients
        </Link>
      </div>
    </section>
  );
}
