/** Patients API calls and their TanStack Query hooks. */
import { keepPreviousData, useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, apiRequest, idempotencyKey, type Page } from '../../api.js';
import { clinicDate, formatInstant } from '../../clinic-time.js';

export interface Patient {
  id: string;
  givenName: string;
  familyName: string;
  dateOfBirth: string | null;
  mrn: string | null;
  preferredProviderId: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface PatientInput {
  givenName: string;
  familyName: string;
  dateOfBirth?: string | null;
  mrn?: string | null;
}

export const patientKeys = {
  all: ['patients'] as const,
  lists: ['patients', 'list'] as const,
  list: (q: string) => ['patients', 'list', q] as const,
  detail: (id: string) => ['patients', 'detail', id] as const,
};

const PAGE_SIZE = 50;

export function usePatientList(q: string) {
  return useInfiniteQuery({
    queryKey: patientKeys.list(q),
    queryFn: ({ pageParam, signal }) =>
      api.get<Page<Patient>>('/patients', { q, limit: PAGE_SIZE, cursor: pageParam }, signal),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    // Keep the old rows on screen while a new search loads, instead of flashing a spinner per keystroke.
    placeholderData: keepPreviousData,
  });
}

/** Up to 8 patients matching a name, date of birth or MRN (the pickers and the command palette). */
export function usePatientSearch(q: string, enabled: boolean) {
  return useQuery({
    queryKey: ['patients', 'search', q],
    enabled,
    queryFn: ({ signal }) => api.get<Page<Patient>>('/patients', { q, limit: 8 }, signal),
    placeholderData: keepPreviousData,
  });
}

/**
 * Patients already registered with exactly this name and date of birth (names ignoring case): asked
 * before a new patient is created, so a second record for the same person is a choice, not an accident.
 */
export function findPossibleDuplicates(
  input: Pick<PatientInput, 'givenName' | 'familyName'> & { dateOfBirth: string },
): Promise<Patient[]> {
  return api
    .get<Page<Patient>>('/patients', {
      givenName: input.givenName,
      familyName: input.familyName,
      dateOfBirth: input.dateOfBirth,
      limit: 5,
    })
    .then((page) => page.items);
}

export function usePatient(id: string) {
  return useQuery({
    queryKey: patientKeys.detail(id),
    queryFn: ({ signal }) => api.get<Patient>(`/patients/${encodeURIComponent(id)}`, undefined, signal),
  });
}

export function useCreatePatient() {
  const queryClient = useQueryClient();
  return useMutation({
    // One key per submitted form: a retry after a lost answer does not create a second patient.
    mutationFn: (input: PatientInput) =>
      apiRequest<Patient>('/patients', {
        method: 'POST',
        body: input,
        headers: { 'Idempotency-Key': idempotencyKey() },
      }),
    onSuccess: async (patient) => {
      queryClient.setQueryData(patientKeys.detail(patient.id), patient);
      await queryClient.invalidateQueries({ queryKey: patientKeys.lists });
    },
  });
}

export function useUpdatePatient(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (changes: Partial<PatientInput>) => api.patch<Patient>(`/patients/${encodeURIComponent(id)}`, changes),
    onSuccess: async (patient) => {
      queryClient.setQueryData(patientKeys.detail(patient.id), patient);
      await queryClient.invalidateQueries({ queryKey: patientKeys.lists });
    },
  });
}

export const fullName = (p: Pick<Patient, 'givenName' | 'familyName'>) => `${p.givenName} ${p.familyName}`.trim();

/** `YYYY-MM-DD` as the reader's locale writes it, without time-zone drift. */
export function formatDate(value: string | null): string {
  if (!value) return '—';
  const [y, m, d] = value.slice(0, 10).split('-').map(Number);
  if (!y || !m || !d) return value;
  return new Date(Date.UTC(y, m - 1, d)).toLocaleDateString(undefined, { timeZone: 'UTC', dateStyle: 'medium' });
}

/**
 * Today's date at the clinic (`YYYY-MM-DD`; its zone, else the device's), not in UTC: a baby born this morning in
 * Auckland is born today.
 */
export function localToday(now = new Date()): string {
  return clinicDate(now);
}

/** An instant as a date and time in the clinic's zone (else the device's). */
export function formatDateTime(value: string): string {
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? value : formatInstant(at, { dateStyle: 'medium', timeStyle: 'short' });
}

/**
 * A patient found by id for showing their name (a picker, a banner, an audit row); null when gone.
 * Read through the search (which matches an exact id), not `GET /patients/:id`: opening the record
 * is what writes the record's `phi_access` row, and showing a name elsewhere is not opening it.
 */
export function patientNameQuery(id: string) {
  return {
    queryKey: [...patientKeys.all, 'name', id],
    queryFn: async ({ signal }: { signal: AbortSignal }) => {
      const found = await api.get<Page<Patient>>('/patients', { q: id, limit: 5 }, signal);
      return found.items.find((p) => p.id === id) ?? null;
    },
    staleTime: 5 * 60_000,
    retry: false,
  };
}

export function usePatientName(id: string | undefined): { name: string | null } {
  const query = useQuery({ ...patientNameQuery(id ?? ''), enabled: Boolean(id) });
  return { name: query.data ? fullName(query.data) : null };
}
