// Imported first by main.tsx, before any module that defines a schema: zod's objects otherwise probe whether
// they may compile code (`new Function`) when they are made, which the page's Content-Security-Policy refuses,
// and the browser writes that refusal to the console on every page load. Parsing without it is as correct and
// fast enough for the forms here.
//
// It also gives every form the same plain words for what zod would say in its own terms ("Too big: expected string
// to have <=100 characters"), wherever a schema does not word a rule itself: the browser's checks and the server's
// answers (`plainMessage` in components/ui/form.tsx) use the words below.
import { z } from 'zod';

/** A text over its limit, in the words every form uses. */
export const tooLongWords = (max: number | bigint) => `Keep it to ${max} characters or fewer.`;
/** A text under its least length (an empty required field is "Fill this in."). */
export const tooShortWords = (min: number | bigint) =>
  Number(min) <= 1 ? 'Fill this in.' : `Use at least ${min} characters.`;
export const EMAIL_WORDS = 'Enter an e-mail address like name@example.com.';

z.config({
  jitless: true,
  customError: (issue) => {
    if (issue.code === 'too_big' && issue.origin === 'string') return tooLongWords(issue.maximum);
    if (issue.code === 'too_small' && issue.origin === 'string') return tooShortWords(issue.minimum);
    if (issue.code === 'invalid_format' && issue.format === 'email') return EMAIL_WORDS;
    return undefined;
  },
});
