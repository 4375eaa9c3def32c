/**
 * Banners at the top of every page while a feature this workspace uses is degraded (contract §9):
 * dismissible for the session (until that incident changes), gone by themselves on recovery.
 */
import { useState } from 'react';
import { Button } from '../../components/ui/button.js';
import { type Banner, useBanners } from './health-api.js';

const KEY = 'atrium.dismissed-banners';
const keyOf = (b: Banner) => `${b.feature}@${b.since}`;

function dismissed(): Set<string> {
  try {
    return new Set(JSON.parse(sessionStorage.getItem(KEY) ?? '[]') as string[]);
  } catch {
    return new Set();
  }
}

export function HealthBanners() {
  const banners = useBanners();
  const [hidden, setHidden] = useState(dismissed);
  const shown = (banners.data?.items ?? []).filter((b) => !hidden.has(keyOf(b)));
  if (shown.length === 0) return null;
  const dismiss = (b: Banner) => {
    const next = new Set(hidden).add(keyOf(b));
    sessionStorage.setItem(KEY, JSON.stringify([...next]));
    setHidden(next);
  };
  return (
    <div className="health-banners">
      {shown.map((b) => (
        <div
          key={keyOf(b)}
          className={`health-banner health-banner-${b.status}`}
          role="status"
          data-testid="health-banner"
          data-feature={b.feature}
        >
          <p>
            <strong>{b.status === 'down' ? 'Not working right now' : 'Working slowly'}:</strong> {b.message}
          </p>
          <Button variant="ghost" size="small" onPress={() => dismiss(b)} data-testid="dismiss-banner">
            Dismiss
          </Button>
        </div>
      ))}
    </div>
  );
}
