// Multinomial naive Bayes with Laplace smoothing, trained when this module loads (a few ms) on
// the labelled corpus shipped beside it (corpus-spam.txt, corpus-ham.txt).
import { readFileSync } from 'node:fs';

export type Label = 'spam' | 'ham';

export interface Example {
  label: Label;
  text: string;
}

export interface Classification {
  label: Label;
  /** Probability of the returned label. */
  probability: number;
  spamProbability: number;
  /** Tokens that pushed hardest towards the decision (log-likelihood ratio). */
  topTokens: { token: string; weight: number }[];
}

const STOP = new Set([
  'the',
  'a',
  'an',
  'and',
  'or',
  'to',
  'of',
  'in',
  'on',
  'for',
  'is',
  'at',
  'be',
  'by',
  'it',
  'this',
  'that',
  'with',
  'as',
  'are',
  'was',
]);

/** Lower-cased words plus a few shape features spam filters have always relied on. */
export function tokenize(text: string): string[] {
  const tokens = (text.toLowerCase().match(/[a-z0-9$€£%']+/g) ?? [])
    .map((t) => t.replace(/^'+|'+$/g, ''))
    .filter((t) => t.length > 1 && !STOP.has(t));
  if (/https?:\/\/|www\./i.test(text)) tokens.push('__url__');
  if (/[$€£]\s?\d/.test(text)) tokens.push('__money__');
  if (/!{2,}/.test(text)) tokens.push('__bangs__');
  if ((text.match(/\b[A-Z]{4,}\b/g) ?? []).length > 0) tokens.push('__shouting__');
  return tokens;
}

export class NaiveBayes {
  private counts: Record<Label, Map<string, number>> = { spam: new Map(), ham: new Map() };
  private totals: Record<Label, number> = { spam: 0, ham: 0 };
  private docs: Record<Label, number> = { spam: 0, ham: 0 };
  private vocabulary = new Set<string>();

  constructor(examples: Example[]) {
    for (const { label, text } of examples) {
      this.docs[label]++;
      for (const token of tokenize(text)) {
        this.counts[label].set(token, (this.counts[label].get(token) ?? 0) + 1);
        this.totals[label]++;
        this.vocabulary.add(token);
      }
    }
  }

  private logLikelihood(label: Label, token: string): number {
    return Math.log(((this.counts[label].get(token) ?? 0) + 1) / (this.totals[label] + this.vocabulary.size));
  }

  classify(text: string): Classification {
    const tokens = tokenize(text).filter((t) => this.vocabulary.has(t));
    const docs = this.docs.spam + this.docs.ham;
    let spam = Math.log(this.docs.spam / docs);
    let ham = Math.log(this.docs.ham / docs);
    const weights = new Map<string, number>();
    for (const token of tokens) {
      const s = this.logLikelihood('spam', token);
      const h = this.logLikelihood('ham', token);
      spam += s;
      ham += h;
      weights.set(token, (weights.get(token) ?? 0) + s - h);
    }
    // Normalise in log space: P(spam) = 1 / (1 + e^(ham - spam)).
    const spamProbability = 1 / (1 + Math.exp(ham - spam));
    const label: Label = spamProbability >= 0.5 ? 'spam' : 'ham';
    const sign = label === 'spam' ? 1 : -1;
    const topTokens = [...weights.entries()]
      .map(([token, weight]) => ({ token, weight: Math.round(weight * 1000) / 1000 }))
      .filter((t) => t.weight * sign > 0)
      .sort((a, b) => (b.weight - a.weight) * sign)
      .slice(0, 5);
    return {
      label,
      probability: label === 'spam' ? spamProbability : 1 - spamProbability,
      spamProbability,
      topTokens,
    };
  }
}

export function loadCorpus(): Example[] {
  const read = (file: string, label: Label) =>
    readFileSync(new URL(file, import.meta.url), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
      .map((text) => ({ label, text }));
  return [...read('./corpus-spam.txt', 'spam'), ...read('./corpus-ham.txt', 'ham')];
}

export const spamModel = new NaiveBayes(loadCorpus());
