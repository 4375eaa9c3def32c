import type { ToolImpl } from '../types.js';

type Section = 'subjective' | 'objective' | 'assessment' | 'plan';

// Cue words per section; the sentence goes to the section with the most cue hits.
const CUES: Record<Section, RegExp[]> = {
  subjective: [
    /\breports?\b/i,
    /\bcomplains?\b/i,
    /\bstates?\b/i,
    /\bdenies\b/i,
    /\bfeels?\b/i,
    /\bpatient says\b/i,
    /\bhistory\b/i,
    /\bc\/o\b/i,
    /\bsince\b/i,
  ],
  objective: [
    /\bbp\b/i,
    /\bblood pressure\b/i,
    /\bheart rate\b/i,
    /\bhr\b/i,
    /\btemp(erature)?\b/i,
    /\bexam\b/i,
    /\bvitals?\b/i,
    /\bspo2\b/i,
    /\blabs?\b/i,
    /\d+\/\d+/,
    /\bauscultation\b/i,
    /\bobserved\b/i,
  ],
  assessment: [
    /\bassessment\b/i,
    /\bdiagnos/i,
    /\bimpression\b/i,
    /\bconsistent with\b/i,
    /\blikely\b/i,
    /\bsuspect/i,
    /\bdifferential\b/i,
  ],
  plan: [
    /\bplan\b/i,
    /\bfollow[- ]up\b/i,
    /\bprescrib/i,
    /\bstart(ed)?\b/i,
    /\brefer/i,
    /\bschedule\b/i,
    /\breturn\b/i,
    /\border(ed)?\b/i,
    /\bcontinue\b/i,
    /\bincrease\b/i,
  ],
};

const structureNote: ToolImpl = async (input) => {
  const sentences = String(input.text)
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
  const out: Record<Section | 'unsorted', string[]> = {
    subjective: [],
    objective: [],
    assessment: [],
    plan: [],
    unsorted: [],
  };
  for (const sentence of sentences) {
    let best: Section | undefined;
    let bestScore = 0;
    for (const section of Object.keys(CUES) as Section[]) {
      const score = CUES[section].filter((re) => re.test(sentence)).length;
      if (score > bestScore) {
        best = section;
        bestScore = score;
      }
    }
    out[best ?? 'unsorted'].push(sentence);
  }
  const count = (s: keyof typeof out) => `${s[0].toUpperCase()}${s.slice(1)}: ${out[s].length}`;
  return {
    ...out,
    summary: `Sorted ${sentences.length} sentence(s) — ${(['subjective', 'objective', 'assessment', 'plan', 'unsorted'] as const).map(count).join(', ')}.`,
  };
};

export const tools = { structure_note: structureNote };
