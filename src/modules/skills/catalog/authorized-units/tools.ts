import { need, type ToolImpl, today } from '../types.js';

const DAY_MS = 86_400_000;

const unitsRemaining: ToolImpl = async (input, caps) => {
  const patients = need(caps.patients, 'patients:read');
  const patientId = String(input.patientId);
  const asOf = (input.asOf as string | undefined) ?? today(caps.now);
  const all = await patients.authorizations(patientId);
  const active = all
    .filter((a) => a.validFrom <= asOf && a.validTo >= asOf)
    .map((a) => {
      const daysLeft = Math.round((Date.parse(a.validTo) - Date.parse(asOf)) / DAY_MS);
      return { ...a, totalMinutes: a.units * a.unitMinutes, daysLeft, expiringSoon: daysLeft <= 14 };
    });
  const upcoming = all.filter((a) => a.validFrom > asOf);
  const expired = all.filter((a) => a.validTo < asOf);
  return {
    patientId,
    asOf,
    active,
    upcoming,
    expiredCount: expired.length,
    summary: active.length
      ? `Active on ${asOf}: ${active
          .map(
            (a) =>
              `${a.service}: ${a.units} units × ${a.unitMinutes} min (${a.totalMinutes} min), ${a.daysLeft} days left${a.expiringSoon ? ' — expiring soon' : ''}`,
          )
          .join('; ')}.`
      : `No authorization is active on ${asOf}${upcoming.length ? `; ${upcoming.length} start later` : ''}.`,
  };
};

export const tools = { units_remaining: unitsRemaining };
