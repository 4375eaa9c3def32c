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

/** PATCH /notes/:id: the sections to change on a draft (author only). */
export const updateNoteBody = z
  .object({
    subjective: section.optional(),
    objective: section.optional(),
    assessment: section.optional(),
    plan: section.optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: 'Send at least one section' });
export type UpdateNoteInput = z.infer<typeof updateNoteBody>;

export const noteSchema = z.object({
  id: z.string(),
  patientId: z.string(),
  authorId: z.string(),
  authorName: z.string().nullable().describe("The author's name (null once the user is gone)"),
  subjective: z.string(),
  objective: z.string(),
  assessment: z.string(),
  plan: z.string(),
  status: z.enum(['draft', 'signed']),
  signedAt: z.string().nullable(),
  signedBy: z.string().nullable(),
  signedByName: z.string().nullable().describe("The signer's name (null while a draft)"),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Note = z.infer<typeof noteSchema>;

export const listNotesQuery = z.object({
  patientId: z.string().min(1).max(100).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(500).optional(),
});
