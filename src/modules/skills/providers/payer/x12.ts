// X12 005010X279A1 eligibility shapes (270 inquiry, 271 answer) as JSON: loops and segments keep
// their X12 names so the mapping to the EDI wire format stays one-to-one.

export interface Eligibility270 {
  transactionSetId: '270';
  /** ST02 / BHT03: our reference, echoed in the 271. */
  controlNumber: string;
  /** BHT04: CCYYMMDD. */
  createdDate: string;
  /** Loop 2100A (NM1*PR). */
  informationSource: { payerId: string; payerName: string };
  /** Loop 2100B (NM1*1P). */
  informationReceiver: { name: string; identifier: string };
  /** Loop 2100C (NM1*IL, DMG, REF*6P). */
  subscriber: {
    memberId: string;
    firstName: string;
    lastName: string;
    /** DMG02: CCYYMMDD. */
    dateOfBirth?: string;
    groupNumber?: string;
  };
  /** Loop 2110C (DTP*291, EQ). */
  eligibilityInquiry: { dateOfService: string; serviceTypeCodes: string[] };
  /**
   * What the provider has on file and asks the payer to confirm: the plan period (DTP*346/347)
   * and prior authorizations (REF*G1 with HSD quantities).
   */
  coverageOnFile: { planName?: string; effectiveFrom: string; effectiveTo?: string };
  priorAuthorizations: {
    reference: string;
    service: string;
    units: number;
    unitMinutes: number;
    validFrom: string;
    validTo: string;
  }[];
}

/** EB01 eligibility or benefit information codes used here. */
export type EbCode = '1' | '6' | 'A' | 'B' | 'C';

export interface Eligibility271 {
  transactionSetId: '271';
  controlNumber: string;
  informationSource: { payerId: string; payerName: string };
  subscriber: { memberId: string; firstName: string; lastName: string };
  /** AAA segments: the request was rejected (no EB segments then). */
  rejections: { code: string; reason: string; followUp: string }[];
  /** EB segments. */
  benefits: {
    code: EbCode;
    meaning: string;
    serviceTypeCode: string;
    planName?: string;
    coverageLevel?: 'IND' | 'FAM';
    amount?: number;
    percent?: number;
    timePeriod?: string;
  }[];
  /** HCR-style answers for each prior authorization sent. */
  authorizations: {
    reference: string;
    service: string;
    status: 'certified' | 'expired' | 'not_yet_valid';
    unitsCertified: number;
    validFrom: string;
    validTo: string;
  }[];
}

export const EB_MEANING: Record<EbCode, string> = {
  '1': 'Active Coverage',
  '6': 'Inactive',
  A: 'Co-Insurance',
  B: 'Co-Payment',
  C: 'Deductible',
};

/** YYYY-MM-DD → CCYYMMDD. */
export const toX12Date = (iso: string) => iso.replaceAll('-', '');
/** CCYYMMDD → YYYY-MM-DD. */
export const fromX12Date = (d: string) => `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}`;
