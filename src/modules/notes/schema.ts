import { z } from 'zod';

const section = z.string().max(20_000);

export const createNoteBody = z.object({
  patientId: z.string().min(1).max(100),
  subjective: section.optional(),
  objective: section.optional(),
  assessment: section.optional(),
  plan: section.optional(),
});
export type CreateNoteInput = z.infer<typeof createNoteBody>;

export const noteSchema = z.object({
  id: z.string(),
  patientId: z.string(),
  authorId: z.string(),
  subjective: z.string(),
  objective: z.string(),
  assessment: z.string(),
  plan: z.string(),
  status: z.enum(['draft', 'signed']),
  signedAt: z.string().nullable(),
  signedBy: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Note = z.infer<typeof noteSchema>;

export const listNotesQuery = z.object({
  patientId: z.string().min(1).max(100).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(500).optional(),
});
