import { need, type ToolImpl } from '../types.js';
import { spamModel } from './classifier.js';

const classify: ToolImpl = async (input, caps) => {
  // The message content is mail data: the tool only runs with mail:read granted.
  need(caps.grantedScopes.includes('mail:read') ? true : undefined, 'mail:read');
  const text = [input.subject, input.from, input.body].filter((x) => typeof x === 'string').join('\n');
  const result = spamModel.classify(text);
  const pct = (p: number) => `${(p * 100).toFixed(1)}%`;
  return {
    ...result,
    model: 'multinomial-naive-bayes',
    summary:
      `${result.label === 'spam' ? 'Spam' : 'Not spam'} (spam probability ${pct(result.spamProbability)})` +
      (result.topTokens.length ? `; strongest words: ${result.topTokens.map((t) => t.token).join(', ')}.` : '.'),
  };
};

export const tools = { classify_message: classify };
