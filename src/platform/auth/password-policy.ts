import { AppError } from '../errors.js';

/**
 * Password rules (NIST SP 800-63B, contract §2a): at least 12 characters, up to 200, no composition
 * rules, and refused when zxcvbn-ts estimates it as guessable (common passwords, names, words,
 * keyboard walks, repeats, dates, and the user's own e-mail or name).
 */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 200;
/** zxcvbn score 3 = "safely unguessable" (about 10^8 guesses or more). */
const MIN_SCORE = 3;
/** Longer passwords are judged by their first 72 characters (bounds the checker's work). */
const CHECKED_LENGTH = 72;

type Checker = { check(password: string, userInputs?: string[]): StrengthResult };
interface StrengthResult {
  score: number;
  feedback: { warning: string | null; suggestions: string[] };
}

// The dictionaries are ~40 MB of heap: load them on the first password that is set, not at start,
// and let them go again after a quiet spell (passwords are set rarely).
const RELEASE_AFTER_MS = 10 * 60_000;
let checker: Promise<Checker> | undefined;
let release: NodeJS.Timeout | undefined;
function loadChecker(): Promise<Checker> {
  clearTimeout(release);
  release = setTimeout(() => {
    checker = undefined;
  }, RELEASE_AFTER_MS);
  release.unref();
  checker ??= (async () => {
    const [{ ZxcvbnFactory }, common, en] = await Promise.all([
      import('@zxcvbn-ts/core'),
      import('@zxcvbn-ts/language-common'),
      import('@zxcvbn-ts/language-en'),
    ]);
    return new ZxcvbnFactory({
      dictionary: { ...common.dictionary, ...en.dictionary },
      graphs: common.adjacencyGraphs,
      translations: en.translations,
      maxLength: CHECKED_LENGTH,
    }) as unknown as Checker;
  })().catch((err) => {
    checker = undefined; // the next password tries again
    throw err;
  });
  return checker;
}

const weak = (detail: string) => new AppError('weak_password', 422, detail);

/** Words of the account itself (e-mail parts, name) that make a password easy to guess. */
function accountWords(context: { email?: string; name?: string }): string[] {
  const words = ['atrium'];
  if (context.email) words.push(context.email, ...context.email.split(/[@.+_-]+/));
  if (context.name) words.push(context.name, ...context.name.split(/\s+/));
  return words.map((w) => w.toLowerCase()).filter((w) => w.length >= 3);
}

/** Throws 422 `weak_password` with a plain-words detail when the password may not be set. */
export async function assertStrongPassword(
  password: string,
  context: { email?: string; name?: string; published?: readonly string[] } = {},
): Promise<void> {
  // A password printed somewhere public (the demo's, in the README) is as guessable as any, however strong it looks.
  if (context.published?.some((p) => p.toLowerCase() === password.trim().toLowerCase())) {
    throw weak('This password is published (it is the demo password); choose one of your own.');
  }
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) {
    throw weak(`Use at least ${PASSWORD_MIN_LENGTH} characters; a few unrelated words make a good password.`);
  }
  if (length > PASSWORD_MAX_LENGTH) throw weak(`Use at most ${PASSWORD_MAX_LENGTH} characters.`);
  const result = (await loadChecker()).check(password, accountWords(context));
  if (result.score >= MIN_SCORE) return;
  const why = result.feedback.warning ?? 'This password is easy to guess.';
  const hint = result.feedback.suggestions[0] ?? 'Add more words that are less common.';
  throw weak(`${why} ${hint}`.trim());
}
