import { AppError } from '../../../../platform/errors.js';
import type { Coverage, SkillCapabilities } from '../../capabilities.js';
import { type Eligibility270, toX12Date } from '../../providers/payer/x12.js';
import { need, type ToolImpl, type ToolInput, today } from '../types.js';

function activeOn(coverages: Coverage[], date: string): Coverage | undefined {
  return coverages.find((c) => c.effectiveFrom <= date && (!c.effectiveTo || c.effectiveTo >= date)) ?? coverages[0];
}

const dollars = (n: number | undefined) => (n === undefined ? 'n/a' : `$${n.toFixed(2)}`);

const checkEligibility: ToolImpl = async (input: ToolInput, caps: SkillCapabilities) => {
  const patients = need(caps.patients, 'patients:read');
  const billing = need(caps.billing, 'billing:read');
  const patientId = String(input.patientId);
  const serviceDate = (input.serviceDate as string | undefined) ?? today(caps.now);
  const serviceTypeCode = (input.serviceTypeCode as string | undefined) ?? '30';

  const patient = await patients.get(patientId);
  const coverage = activeOn(await billing.coverages(patientId), serviceDate);
  if (!coverage) {
    throw new AppError('no_coverage', 422, 'The patient has no insurance coverage on file; record it first', {
      patientId,
    });
  }
  const authorizations = await patients.authorizations(patientId);
  const inquiry: Eligibility270 = {
    transactionSetId: '270',
    controlNumber: String(Date.now() % 1_000_000_000).padStart(9, '0'),
    createdDate: toX12Date(today(caps.now)),
    informationSource: { payerId: coverage.payerId, payerName: coverage.payerName },
    informationReceiver: { name: 'Atrium workspace', identifier: caps.skill.skillId },
    subscriber: {
      memberId: coverage.memberId,
      firstName: patient.givenName,
      lastName: patient.familyName,
      dateOfBirth: patient.dateOfBirth ? toX12Date(patient.dateOfBirth) : undefined,
      groupNumber: coverage.groupNumber ?? undefined,
    },
    eligibilityInquiry: { dateOfService: toX12Date(serviceDate), serviceTypeCodes: [serviceTypeCode] },
    coverageOnFile: {
      planName: coverage.planName ?? undefined,
      effectiveFrom: toX12Date(coverage.effectiveFrom),
      effectiveTo: coverage.effectiveTo ? toX12Date(coverage.effectiveTo) : undefined,
    },
    priorAuthorizations: authorizations.map((a) => ({
      reference: a.id,
      service: a.service,
      units: a.units,
      unitMinutes: a.unitMinutes,
      validFrom: toX12Date(a.validFrom),
      validTo: toX12Date(a.validTo),
    })),
  };
  const answer = await billing.payer.checkEligibility(inquiry);

  const eb = (code: string) => answer.benefits.find((b) => b.code === code);
  const status = answer.rejections.length ? 'rejected' : eb('1') ? 'active' : 'inactive';
  const copay = eb('B')?.amount;
  const coinsurancePercent = eb('A')?.percent;
  const deductibleRemaining = eb('C')?.amount;
  const auths = answer.authorizations;
  const summary =
    status === 'rejected'
      ? `${coverage.payerName} rejected the inquiry for ${patient.givenName} ${patient.familyName}: ${answer.rejections.map((r) => r.reason).join('; ')}.`
      : status === 'active'
        ? `${patient.givenName} ${patient.familyName} has active coverage with ${coverage.payerName}` +
          `${eb('1')?.planName ? ` (${eb('1')?.planName})` : ''} on ${serviceDate}: copay ${dollars(copay)}, ` +
          `coinsurance ${coinsurancePercent ?? 'n/a'}%, deductible remaining ${dollars(deductibleRemaining)}.` +
          (auths.length
            ? ` Authorizations: ${auths.map((a) => `${a.service} ${a.status} (${a.unitsCertified} units)`).join(', ')}.`
            : ' No prior authorizations on file.')
        : `${patient.givenName} ${patient.familyName}'s coverage with ${coverage.payerName} is inactive on ${serviceDate}.`;
  return {
    status,
    patientId,
    serviceDate,
    serviceTypeCode,
    payer: answer.informationSource,
    memberId: coverage.memberId,
    planName: eb('1')?.planName ?? coverage.planName,
    copay: copay ?? null,
    coinsurancePercent: coinsurancePercent ?? null,
    deductibleRemaining: deductibleRemaining ?? null,
    authorizations: auths,
    rejections: answer.rejections,
    x12: { request: inquiry, response: answer },
    summary,
  };
};

const recordCoverage: ToolImpl = async (input, caps) => {
  const patients = need(caps.patients, 'patients:read');
  const writer = need(caps.billingWriter, 'billing:write');
  const patientId = String(input.patientId);
  const patient = await patients.get(patientId);
  const coverage = await writer.addCoverage(patientId, {
    payerId: String(input.payerId),
    payerName: String(input.payerName),
    memberId: String(input.memberId),
    groupNumber: input.groupNumber as string | undefined,
    planName: input.planName as string | undefined,
    effectiveFrom: String(input.effectiveFrom),
    effectiveTo: input.effectiveTo as string | undefined,
  });
  return {
    coverage,
    summary: `Recorded ${coverage.payerName} coverage (member ${coverage.memberId}) for ${patient.givenName} ${patient.familyName} from ${coverage.effectiveFrom}.`,
  };
};

export const tools = { check_eligibility: checkEligibility, record_coverage: recordCoverage };
