// Finds code-table phrases in a clinical note, skipping negated findings, and picks time-based
// psychotherapy codes from the documented minutes. Every suggestion keeps its evidence.
import { readFileSync } from 'node:fs';

export interface CodeEntry {
  system: 'CPT' | 'ICD-10-CM';
  code: string;
  description: string;
  phrases: string[];
  timeBased?: { cue: string[]; minMinutes: number; maxMinutes: number };
}

export interface Evidence {
  phrase: string;
  /** Character offset in the note. */
  at: number;
  /** The sentence around the phrase. */
  context: string;
}

export interface CodeSuggestion {
  system: CodeEntry['system'];
  code: string;
  description: string;
  evidence: Evidence[];
  /** 0..1: more distinct phrases → more confidence. */
  confidence: number;
}

export const CODE_TABLE: { version: string; codes: CodeEntry[] } = JSON.parse(
  readFileSync(new URL('./codes.json', import.meta.url), 'utf8'),
);

const NEGATION = /\b(no|not|denies|denied|without|negative for|ruled out|rules out|free of|absence of)\b/i;
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function sentenceAround(note: string, at: number): { text: string; start: number } {
  let start = at;
  while (start > 0 && !/[.!?\n;]/.test(note[start - 1])) start--;
  let end = at;
  while (end < note.length && !/[.!?\n;]/.test(note[end])) end++;
  return { text: note.slice(start, end).trim(), start };
}

/** A finding is negated when a negation cue precedes it within its clause (up to 5 words back). */
function isNegated(note: string, at: number): boolean {
  const { start } = sentenceAround(note, at);
  const before =
    note
      .slice(start, at)
      .split(/,|\bbut\b|\bhowever\b/i)
      .pop() ?? '';
  const words = before.trim().split(/\s+/).slice(-5).join(' ');
  return NEGATION.test(words);
}

function find(note: string, phrase: string): number[] {
  const re = new RegExp(`(?<![a-z0-9])${escapeRe(phrase)}(?![a-z0-9])`, 'gi');
  return [...note.matchAll(re)].map((m) => m.index ?? 0);
}

/** Documented session minutes: "53 minutes", "45 min", "60-minute". */
function documentedMinutes(note: string): { minutes: number; at: number; phrase: string } | undefined {
  const m = /(\d{2,3})\s*-?\s*(?:minutes?|mins?)\b/i.exec(note);
  return m ? { minutes: Number(m[1]), at: m.index, phrase: m[0] } : undefined;
}

export function suggestCodes(note: string, table: CodeEntry[] = CODE_TABLE.codes): CodeSuggestion[] {
  const out: CodeSuggestion[] = [];
  for (const entry of table) {
    const evidence: Evidence[] = [];
    if (entry.timeBased) {
      const cueAt = entry.timeBased.cue.flatMap((c) => find(note, c).map((at) => ({ at, phrase: c })));
      const time = documentedMinutes(note);
      if (
        cueAt.length &&
        time &&
        time.minutes >= entry.timeBased.minMinutes &&
        time.minutes <= entry.timeBased.maxMinutes
      ) {
        evidence.push({
          phrase: note.substr(cueAt[0].at, cueAt[0].phrase.length),
          at: cueAt[0].at,
          context: sentenceAround(note, cueAt[0].at).text,
        });
        evidence.push({ phrase: time.phrase, at: time.at, context: sentenceAround(note, time.at).text });
      }
    } else {
      const seen = new Set<string>();
      for (const phrase of entry.phrases) {
        for (const at of find(note, phrase)) {
          // Procedures and visits are not negated the way findings are; diagnoses are.
          if (entry.system === 'ICD-10-CM' && isNegated(note, at)) continue;
          const key = phrase.toLowerCase();
          if (seen.has(key)) continue;
          seen.add(key);
          evidence.push({ phrase: note.substr(at, phrase.length), at, context: sentenceAround(note, at).text });
        }
      }
    }
    if (evidence.length) {
      out.push({
        system: entry.system,
        code: entry.code,
        description: entry.description,
        evidence,
        confidence: Math.min(0.95, 0.5 + 0.15 * evidence.length),
      });
    }
  }
  // More specific diagnosis wins: drop E11.9 when E11.65 matched.
  const codes = new Set(out.map((s) => s.code));
  return out
    .filter((s) => !(s.code === 'E11.9' && codes.has('E11.65')))
    .sort((a, b) => (a.system === b.system ? b.confidence - a.confidence : a.system === 'CPT' ? -1 : 1));
}
