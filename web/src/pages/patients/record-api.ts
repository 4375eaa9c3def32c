/** The patient record's other sections: coverage, authorizations, notes, claims, audit, break-glass. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, api, apiRequest, idempotencyKey, type Page } from '../../api.js';
import { localToday } from './patients-api.js';

const enc = encodeURIComponent;

export interface Coverage {
  id: string;
  patientId: string;
  payerName: string;
  payerId: string;
  memberId: string;
  groupNumber: string | null;
  planName: string | null;
  effectiveFrom: string;
  effectiveTo: string | null;
}

export interface CoverageInput {
  payerName: string;
  payerId: string;
  memberId: string;
  groupNumber?: string;
  planName?: string;
}

export interface Authorization {
  id: string;
  patientId: string;
  service: string;
  units: number;
  unitMinutes: number;
  validFrom: string;
  validTo: string;
  createdAt: string;
  unitsUsed?: number;
}

export interface Note {
  id: string;
  patientId: string;
  authorId: string;
  /** null once the author is no longer a user this workspace can see. */
  authorName: string | null;
  subjective: string;
  objective: string;
  assessment: string;
  plan: string;
  status: 'draft' | 'signed';
  signedAt: string | null;
  signedBy: string | null;
  signedByName: string | null;
  createdAt: string;
  updatedAt: string;
}

export type NoteSections = Pick<Note, 'subjective' | 'objective' | 'assessment' | 'plan'>;

export interface Claim {
  id: string;
  patientId: string;
  noteId: string | null;
  payer: string;
  serviceDate: string | null;
  codes: string[];
  amountCents: number;
  status: 'submitted' | 'paid' | 'denied';
  paidAmountCents: number | null;
  denialReason: string | null;
  submittedAt: string;
  adjudicatedAt: string | null;
}

export interface AuditRow {
  id: string;
  kind: string;
  at: string;
  actorUserId: string | null;
  [member: string]: unknown;
}

export const recordKeys = {
  coverage: (id: string) => ['patients', 'coverage', id] as const,
  authorizations: (id: string) => ['patients', 'authorizations', id] as const,
  notes: (id: string) => ['notes', 'patient', id] as const,
  claims: (id: string) => ['claims', 'patient', id] as const,
  audit: (id: string) => ['audit', 'patient', id] as const,
};

export function useCoverage(patientId: string) {
  return useQuery({
    queryKey: recordKeys.coverage(patientId),
    // 404 means "no coverage on file", which is an answer, not an error.
    queryFn: async ({ signal }) => {
      try {
        // On file on the reader's own date (a US evening is already tomorrow in UTC).
        return await api.get<Coverage>(`/patients/${enc(patientId)}/coverage`, { today: localToday() }, signal);
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }
    },
  });
}

export function useSaveCoverage(patientId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    // From the reader's own date: entered at 7:37 PM in New York on the 26th, it is on file since the 26th.
    mutationFn: (input: CoverageInput) =>
      api.put<unknown>(`/patients/${enc(patientId)}/coverage`, { ...input, today: localToday() }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: recordKeys.coverage(patientId) }),
  });
}

export function useAuthorizations(patientId: string) {
  return useQuery({
    queryKey: recordKeys.authorizations(patientId),
    queryFn: ({ signal }) =>
      api.get<{ items: Authorization[] }>(`/patients/${enc(patientId)}/authorizations`, undefined, signal),
  });
}

export function useAddAuthorization(patientId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: { service: string; units: number; unitMinutes: number; validFrom: string; validTo: string }) =>
      api.post<Authorization>(`/patients/${enc(patientId)}/authorizations`, input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: recordKeys.authorizations(patientId) }),
  });
}

export function useNotes(patientId: string) {
  return useQuery({
    queryKey: recordKeys.notes(patientId),
    queryFn: ({ signal }) => api.get<Page<Note>>('/notes', { patientId, limit: 100 }, signal),
  });
}

export function useCreateNote(patientId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: NoteSections) => api.post<Note>('/notes', { patientId, ...input }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: recordKeys.notes(patientId) }),
  });
}

/** Changes the author's own draft (PATCH: the sections sent, nothing else). */
export function useUpdateNote(patientId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ noteId, changes }: { noteId: string; changes: Partial<NoteSections> }) =>
      api.patch<Note>(`/notes/${enc(noteId)}`, changes),
    // Not on a refusal: the note list would come back signed (someone signed it meanwhile) and take the
    // dialog, with what was typed in it, away; the caller reloads once the dialog is closed.
    onSuccess: () => queryClient.invalidateQueries({ queryKey: recordKeys.notes(patientId) }),
  });
}

/** Reloads a patient's notes (after a refused change, once its dialog is closed). */
export function useReloadNotes(patientId: string) {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: recordKeys.notes(patientId) });
}

export function useSignNote(patientId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (noteId: string) => api.post<Note>(`/notes/${enc(noteId)}/sign`),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: recordKeys.notes(patientId) }),
  });
}

export function useClaims(patientId: string) {
  return useQuery({
    queryKey: recordKeys.claims(patientId),
    queryFn: ({ signal }) => api.get<Page<Claim>>('/claims', { patientId, limit: 100 }, signal),
  });
}

export function useSubmitClaim(patientId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: {
      payer: string;
      amountCents: number;
      codes: string[];
      serviceDate?: string;
      noteId?: string;
    }) =>
      apiRequest<Claim>('/claims', {
        method: 'POST',
        body: { patientId, ...input },
        headers: { 'Idempotency-Key': idempotencyKey() },
      }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: recordKeys.claims(patientId) }),
  });
}

export function useAdjudicateClaim(patientId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: { claimId: string; outcome: 'paid' | 'denied'; paidAmountCents?: number; reason?: string }) => {
      const { claimId, ...body } = input;
      return api.post<Claim>(`/claims/${enc(claimId)}/adjudicate`, body);
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: recordKeys.claims(patientId) }),
  });
}

export function usePatientAudit(patientId: string, enabled: boolean) {
  return useQuery({
    queryKey: recordKeys.audit(patientId),
    enabled,
    queryFn: ({ signal }) => api.get<Page<AuditRow>>('/audit', { patientId, limit: 100 }, signal),
  });
}

export function useBreakGlass(patientId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (reason: string) =>
      api.post<{ id: string; invokedAt: string }>(`/patients/${enc(patientId)}/break-glass`, { reason }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: recordKeys.audit(patientId) }),
  });
}

export function formatMoney(cents: number): string {
  return (cents / 100).toLocaleString(undefined, { style: 'currency', currency: 'USD' });
}
