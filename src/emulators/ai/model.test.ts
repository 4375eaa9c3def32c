import { describe, expect, it } from 'vitest';
import { complete, type EmuTool } from './model.js';

const tool = (name: string): EmuTool => ({ type: 'function', function: { name, parameters: { type: 'object' } } });

/** The system message as the chat service writes it: a skill's triggers on every one of its tools. */
function system(lines: string[]): string {
  return ['You are the Atrium assistant.', '', 'Routing triggers (tool: phrases):', ...lines, ''].join('\n');
}

describe('offline model, a request no skill fits', () => {
  it('suggests distinct examples when tools of one skill share their triggers', () => {
    const tools = [tool('spam__classify'), tool('elig__check'), tool('elig__history'), tool('codes__suggest')];
    const answer = complete(
      [
        {
          role: 'system',
          content: system([
            'spam__classify: spam | junk mail',
            'elig__check: eligibility | insurance coverage',
            'elig__history: eligibility | insurance coverage',
            'codes__suggest: billing codes | cpt',
          ]),
        },
        { role: 'user', content: 'hello there' },
      ],
      tools,
      () => 'call_1',
    );
    expect(answer.content).toBe(
      "I'm the offline model and could not tell which skill fits. Try a request with “spam”, “eligibility”, “billing codes” in it.",
    );
  });

  it('fills up with a skill’s other phrases when fewer skills than examples are offered', () => {
    const answer = complete(
      [
        {
          role: 'system',
          content: system(['elig__check: eligibility | insurance coverage', 'elig__history: eligibility']),
        },
        { role: 'user', content: 'hello there' },
      ],
      [tool('elig__check'), tool('elig__history')],
      () => 'call_1',
    );
    expect(answer.content).toContain('Try a request with “eligibility”, “insurance coverage” in it.');
  });
});
