import { describe, expect, it } from 'vitest';
import { type Example, loadCorpus, NaiveBayes, tokenize } from './classifier.js';

describe('naive Bayes spam classifier', () => {
  const corpus = loadCorpus();

  it('ships a labelled corpus of a few hundred lines, balanced', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(250);
    const spam = corpus.filter((e) => e.label === 'spam').length;
    expect(spam / corpus.length).toBeGreaterThan(0.4);
    expect(spam / corpus.length).toBeLessThan(0.6);
  });

  it('generalises: 5-fold cross-validation accuracy above 85%', () => {
    let correct = 0;
    for (let fold = 0; fold < 5; fold++) {
      const train: Example[] = [];
      const test: Example[] = [];
      corpus.forEach((e, i) => {
        (i % 5 === fold ? test : train).push(e);
      });
      const model = new NaiveBayes(train);
      correct += test.filter((e) => model.classify(e.text).label === e.label).length;
    }
    expect(correct / corpus.length).toBeGreaterThan(0.85);
  });

  it('returns calibrated-looking probabilities and the words behind them', () => {
    const model = new NaiveBayes(corpus);
    const spam = model.classify('URGENT!!! Verify your bank password now to claim your $500 prize: http://x.example');
    expect(spam.label).toBe('spam');
    expect(spam.probability).toBeGreaterThan(0.95);
    expect(spam.spamProbability).toBe(spam.probability);
    expect(spam.topTokens.length).toBeGreaterThan(0);
    const ham = model.classify('The patient rescheduled her follow-up to Thursday; please update the calendar.');
    expect(ham.label).toBe('ham');
    expect(ham.probability).toBeCloseTo(1 - ham.spamProbability, 10);
    // Unknown words only: falls back to the prior (balanced corpus ≈ 0.5).
    expect(model.classify('zzqx qqzv').spamProbability).toBeCloseTo(0.5, 1);
  });

  it('tokenizes words and shape features', () => {
    expect(tokenize('FREE money!!! at https://x.io for $5')).toEqual(
      expect.arrayContaining(['free', 'money', '__url__', '__money__', '__bangs__', '__shouting__']),
    );
  });
});
