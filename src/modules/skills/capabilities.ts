// The capability object a tool receives: one client per granted scope and nothing else, so a
// tool cannot reach data outside its grants even by mistake (there is no client to call).
import type { Scope } from '../../../packages/skill-sdk/src/manifest.js';
import { writeAudit } from '../../platform/audit/audit.js';
import type { RequestContext } from '../../platform/context.js';
import { withTenant } from '../../platform/db/tenant.js';
import { notFound } from '../../platform/errors.js';
import type { AppDeps } from '../../platform/types.js';
import * as claims from '../claims/index.js';
import * as directMessages from '../direct-messages/index.js';
import * as notes from '../notes/index.js';
import type { Patient } from '../patients/index.js';
import * as patientsService from '../patients/index.js';
import { type PayerAdapter, resolvePayerAdapter } from './providers/payer/payer-adapter.js';

export interface Authorization {
  id: string;
  patientId: string;
  service: string;
  units: number;
  unitMinutes: number;
  validFrom: string;
  validTo: string;
}

export interface Coverage {
  id: string;
  patientId: string;
  payerId: string;
  payerName: string;
  memberId: string;
  groupNumber: string | null;
  planName: string | null;
  effectiveFrom: string;
  effectiveTo: string | null;
}

export interface SoapNote {
  id: string;
  patientId: string;
  status: string;
  subjective: string;
  objective: string;
  assessment: string;
  plan: string;
  createdAt: string;
}

export interface Appointment {
  id: string;
  title: string;
  start: string;
  end: string;
  /** The event's own IANA zone, for saying when in words. */
  timeZone?: string;
  joinUrl?: string | null;
}

/** `patients:read` */
export interface PatientsReader {
  get(patientId: string): Promise<Patient>;
  search(query: string, limit: number): Promise<Patient[]>;
  authorizations(patientId: string): Promise<Authorization[]>;
  note(noteId: string): Promise<SoapNote>;
  recentNotes(patientId: string, limit: number): Promise<SoapNote[]>;
  /** Staff messages mentioning the patient, from threads the caller takes part in. */
  recentMentions(
    patientId: string,
    limit: number,
  ): Promise<{ id: string; threadId: string; senderId: string; excerpt: string; createdAt: string }[]>;
  /** The soonest upcoming appointment; null when there is none, `unavailable` when the calendars could not say. */
  nextAppointment(patientId: string): Promise<Appointment | null | 'unavailable'>;
}

/** `patients:write` */
export interface PatientsWriter {
  create(input: { givenName: string; familyName: string; dateOfBirth?: string; mrn?: string }): Promise<Patient>;
}

/** `billing:read` */
export interface BillingReader {
  coverages(patientId: string): Promise<Coverage[]>;
  recentClaims(
    patientId: string,
    limit: number,
  ): Promise<
    { id: string; payer: string; status: string; codes: string[]; amountCents: number; submittedAt: string }[]
  >;
  /** The payer connection (eligibility inquiries). It only sends what the tool hands it. */
  payer: PayerAdapter;
}

/** `billing:write` */
export interface BillingWriter {
  addCoverage(
    patientId: string,
    input: Omit<Coverage, 'id' | 'patientId' | 'groupNumber' | 'planName' | 'effectiveTo'> & {
      groupNumber?: string;
      planName?: string;
      effectiveTo?: string;
    },
  ): Promise<Coverage>;
}

export interface SkillCapabilities {
  skill: { slug: string; skillId: string; version: string };
  caller: { userId: string };
  grantedScopes: readonly Scope[];
  now: Date;
  patients?: PatientsReader;
  patientsWriter?: PatientsWriter;
  billing?: BillingReader;
  billingWriter?: BillingWriter;
}

/**
 * Where upcoming appointments come from. The calendar module registers its source here (it owns
 * that data); until one is registered, briefs say there is no appointment source.
 */
export type AppointmentSource = (
  deps: AppDeps,
  ctx: RequestContext,
  patientId: string,
  now: Date,
) => Promise<Appointment | null | 'unavailable'>;
let appointmentSource: AppointmentSource | undefined;
export function registerAppointmentSource(source: AppointmentSource): void {
  appointmentSource = source;
}
export function hasAppointmentSource(): boolean {
  return appointmentSource !== undefined;
}

function patientsReader(deps: AppDeps, ctx: RequestContext, skill: string): PatientsReader {
  const tenant = <T>(fn: Parameters<typeof withTenant<T>>[2]) => withTenant(deps.db, ctx, fn);
  const presentNote = (n: notes.Note): SoapNote => ({
    id: n.id,
    patientId: n.patientId,
    status: n.status,
    subjective: n.subjective,
    objective: n.objective,
    assessment: n.assessment,
    plan: n.plan,
    createdAt: n.createdAt,
  });
  return {
    get: async (patientId) => {
      const patient = await patientsService.getPatient(deps, ctx, patientId);
      // Reading a patient record through a skill is PHI access: leave the trail.
      await tenant((tx) => writeAudit(tx, ctx, 'phi_access', { patientId, context: `skills.${skill}` }));
      return patient;
    },
    search: async (query, limit) => (await patientsService.listPatients(deps, ctx, { q: query, limit })).items,
    authorizations: (patientId) => patientsService.listAuthorizations(deps, ctx, patientId),
    note: async (noteId) => {
      const note = await tenant((tx) => notes.findNote(tx, ctx, noteId));
      if (!note) throw notFound('SOAP note');
      return presentNote(note);
    },
    recentNotes: async (patientId, limit) => (await notes.recentNotes(deps, ctx, patientId, limit)).map(presentNote),
    recentMentions: async (patientId, limit) => {
      const mentions = await directMessages.recentMentions(deps, ctx, patientId, limit);
      // A mention reads as the patient's name, as the message shows it, never as its `@patient:<id>` token.
      const ids = [...new Set(mentions.flatMap((m) => directMessages.parsePatientMentions(m.body)))];
      const names = await tenant((tx) => patientsService.patientNames(tx, ctx.workspaceId, ids));
      return mentions.map((m) => {
        const text = directMessages
          .splitMentions(m.body)
          .map((part) => ('text' in part ? part.text : (names.get(part.patientId) ?? 'a patient')))
          .join('');
        return {
          id: m.id,
          threadId: m.threadId,
          senderId: m.senderId,
          excerpt: text.length > 200 ? `${text.slice(0, 197)}…` : text,
          createdAt: m.createdAt,
        };
      });
    },
    nextAppointment: (patientId) =>
      appointmentSource ? appointmentSource(deps, ctx, patientId, new Date()) : Promise.resolve(null),
  };
}

function billingReader(deps: AppDeps, ctx: RequestContext): BillingReader {
  return {
    coverages: (patientId) => patientsService.listCoverages(deps, ctx, patientId),
    recentClaims: async (patientId, limit) =>
      (await claims.recentClaims(deps, ctx, patientId, limit)).map((c) => ({
        id: c.id,
        payer: c.payer,
        status: c.status,
        codes: c.codes,
        amountCents: c.amountCents,
        submittedAt: c.submittedAt,
      })),
    get payer() {
      return resolvePayerAdapter(deps, ctx.requestId);
    },
  };
}

function billingWriter(deps: AppDeps, ctx: RequestContext): BillingWriter {
  return {
    // Coverage belongs to the patient record: the patients module owns the table and its rules.
    addCoverage: (patientId, input) => patientsService.addCoverage(deps, ctx, patientId, input),
  };
}

/** Builds the capability object for one invocation from the install's granted scopes. */
export function buildCapabilities(
  deps: AppDeps,
  ctx: RequestContext,
  skill: SkillCapabilities['skill'],
  granted: readonly Scope[],
): SkillCapabilities {
  const has = (scope: Scope) => granted.includes(scope);
  const caps: SkillCapabilities = {
    skill,
    caller: { userId: ctx.userId },
    grantedScopes: Object.freeze([...granted]),
    now: new Date(),
  };
  if (has('patients:read')) caps.patients = patientsReader(deps, ctx, skill.slug);
  if (has('patients:write')) {
    caps.patientsWriter = { create: (input) => patientsService.createPatient(deps, ctx, input) };
  }
  if (has('billing:read')) caps.billing = billingReader(deps, ctx);
  if (has('billing:write')) caps.billingWriter = billingWriter(deps, ctx);
  return Object.freeze(caps);
}
