/** Whether the screen is phone-sized (≤ 640 px, the app's one small-screen breakpoint), following resizes. */
import { useEffect, useState } from 'react';

export const PHONE = '(max-width: 640px)';

export function usePhone(): boolean {
  const [phone, setPhone] = useState(() => window.matchMedia(PHONE).matches);
  useEffect(() => {
    const query = window.matchMedia(PHONE);
    const update = () => setPhone(query.matches);
    query.addEventListener('change', update);
    return () => query.removeEventListener('change', update);
  }, []);
  return phone;
}
