// The server-side guard on the assistant's words (contract §4): whatever a model writes, the answer
// shows no function or tool names and no internal ids; patient ids it knows become names.
import { describe, expect, it } from 'vitest';
import { sanitizeAnswer, toolLabel } from './chat-service.js';

const names = new Map([
  ['insurance-eligibility__check_eligibility', { slug: 'insurance-eligibility', tool: 'check_eligibility' }],
  ['billing-codes__suggest_codes_for_note', { slug: 'billing-codes', tool: 'suggest_codes_for_note' }],
  ['acme__search', { slug: 'acme', tool: 'search' }],
]);
const maria = 'pat_01kq8x4b6m2n7p9r3s5t7v9w1y';
const people = new Map([[maria, 'Maria Lopez']]);

describe('sanitizeAnswer', () => {
  it('turns function names, "slug › tool" and bare tool names into plain labels', () => {
    expect(
      sanitizeAnswer(
        'I called insurance-eligibility__check_eligibility, then billing-codes › suggest_codes_for_note.',
        names,
        people,
      ),
    ).toBe('I called check eligibility, then suggest codes for note.');
    expect(sanitizeAnswer('Used check_eligibility and assistant__lookup_patient.', names, people)).toBe(
      'Used check eligibility and patient lookup.',
    );
    expect(sanitizeAnswer('lookup_patient found her', names, people)).toBe('patient lookup found her');
  });

  it('leaves ordinary words alone even when a tool has that name', () => {
    expect(sanitizeAnswer('Search the chart for prior_auth_code later.', names, people)).toBe(
      'Search the chart for prior_auth_code later.',
    );
  });

  it('replaces known patient ids by the name and drops other ids with the brackets around them', () => {
    expect(sanitizeAnswer(`Eligibility for ${maria} is active.`, names, people)).toBe(
      'Eligibility for Maria Lopez is active.',
    );
    expect(sanitizeAnswer('Codes for the note (note_01kq8x4b6m2n7p9r3s5t7v9w1y): I10.', names, people)).toBe(
      'Codes for the note: I10.',
    );
    expect(sanitizeAnswer('Patient pat_01kq8x4b6m2n7p9r3s5t7v9w1z , done', names, people)).toBe('Patient, done');
  });

  it('labels tools in words', () => {
    expect(toolLabel('check_eligibility')).toBe('Check eligibility');
    expect(toolLabel('units-remaining')).toBe('Units remaining');
  });
});
