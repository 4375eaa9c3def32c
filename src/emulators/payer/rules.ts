// The payer's deterministic adjudication rules. It knows nothing about our database: it answers
// from the 270 it receives (member, plan period, prior authorizations) and fixed rules.
import { createHash } from 'node:crypto';
import { EB_MEANING, type Eligibility270, type Eligibility271 } from '../../modules/skills/index.js';

const MEMBER_ID = /^[A-Z0-9]{6,20}$/;

/** Stable small numbers per member: the same member always gets the same benefits. */
function seed(memberId: string, payerId: string): number {
  return createHash('sha256').update(`${payerId}:${memberId}`).digest().readUInt32BE(0);
}

export function adjudicate(req: Eligibility270): Eligibility271 {
  const base: Omit<Eligibility271, 'rejections' | 'benefits' | 'authorizations'> = {
    transactionSetId: '271',
    controlNumber: req.controlNumber,
    informationSource: req.informationSource,
    subscriber: {
      memberId: req.subscriber.memberId,
      firstName: req.subscriber.firstName,
      lastName: req.subscriber.lastName,
    },
  };
  const member = req.subscriber.memberId.toUpperCase();
  // AAA*N**72: invalid/missing subscriber id; AAA*N**75: subscriber not found (ids starting NF).
  if (!MEMBER_ID.test(member)) {
    return {
      ...base,
      rejections: [{ code: '72', reason: 'Invalid/Missing Subscriber/Insured ID', followUp: 'C' }],
      benefits: [],
      authorizations: [],
    };
  }
  if (member.startsWith('NF')) {
    return {
      ...base,
      rejections: [{ code: '75', reason: 'Subscriber/Insured Not Found', followUp: 'C' }],
      benefits: [],
      authorizations: [],
    };
  }
  const dos = req.eligibilityInquiry.dateOfService;
  const plan = req.coverageOnFile;
  const active = plan.effectiveFrom <= dos && (!plan.effectiveTo || plan.effectiveTo >= dos);
  const stc = req.eligibilityInquiry.serviceTypeCodes[0] ?? '30';
  const n = seed(member, req.informationSource.payerId);
  const planName = plan.planName ?? `${req.informationSource.payerName} PPO`;
  const benefits: Eligibility271['benefits'] = active
    ? [
        { code: '1', meaning: EB_MEANING['1'], serviceTypeCode: stc, planName, coverageLevel: 'IND' },
        { code: 'B', meaning: EB_MEANING.B, serviceTypeCode: stc, amount: 10 + (n % 9) * 5, timePeriod: 'visit' },
        { code: 'A', meaning: EB_MEANING.A, serviceTypeCode: stc, percent: [10, 20, 30][n % 3] },
        {
          code: 'C',
          meaning: EB_MEANING.C,
          serviceTypeCode: stc,
          amount: ((n >>> 8) % 21) * 100,
          timePeriod: 'remaining',
        },
      ]
    : [{ code: '6', meaning: EB_MEANING['6'], serviceTypeCode: stc, planName }];
  const authorizations = req.priorAuthorizations.map((a) => ({
    reference: a.reference,
    service: a.service,
    status:
      dos < a.validFrom ? ('not_yet_valid' as const) : dos > a.validTo ? ('expired' as const) : ('certified' as const),
    unitsCertified: active ? a.units : 0,
    validFrom: a.validFrom,
    validTo: a.validTo,
  }));
  return { ...base, rejections: [], benefits, authorizations };
}
