import { describe, expect, it } from 'vitest';
import { parsePatientMentions, splitMentions } from './mentions.js';

describe('@patient mentions', () => {
  it('finds distinct ids in order of first appearance', () => {
    expect(parsePatientMentions('see @patient:pat_01a and @patient:pat_02b, then @patient:pat_01a.')).toEqual([
      'pat_01a',
      'pat_02b',
    ]);
  });
  it('ignores text that only looks similar', () => {
    expect(parsePatientMentions('email a@patient.org or @patient: pat_1 or @Patient:pat_2')).toEqual([]);
  });
  it('splits a body into text and mention parts', () => {
    expect(splitMentions('Hi @patient:pat_1!')).toEqual([{ text: 'Hi ' }, { patientId: 'pat_1' }, { text: '!' }]);
  });
});
