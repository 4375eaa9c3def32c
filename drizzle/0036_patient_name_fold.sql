-- Patient names compared without accents and case: search and the duplicate check before registering
-- (GET /patients?q=, ?givenName=&familyName=) find "José Müller" when typed "Jose Muller", "renee garcia"
-- finds "Renée García". The embedded database loads no extension (unaccent costs memory on every start),
-- so the folding is core SQL, the same on PGlite and on the server:
--   1. NFKD (normalize): "é" becomes "e" + a combining accent, "ﬁ" "fi", "Ｊ" "J", "ĳ" "ij", "ŀ" "l·";
--   2. lower-case (after NFKD, so "ℌ" and "İ" end lower-case too);
--   3. drop the combining marks NFKD split off (the diacritical-mark blocks U+0300–036F, 1AB0–1AFF,
--      1DC0–1DFF, 20D0–20FF, FE20–FE2F; the vowel signs of Indic, Hebrew or Arabic script are kept);
--   4. letters NFKD leaves alone: ß→ss, æ→ae, œ→oe, þ→th, ø→o, ł→l, đ→d, ð→d, ħ→h, ı→i, ŧ→t, ŋ→n,
--      ƀ→b, ǥ→g, ɨ→i, ƚ→l, ʉ→u, ƶ→z, ς→σ (their capitals were lower-cased in step 2);
--   5. hyphens and dashes become spaces ("Smith-Jones" = "smith jones"); apostrophes (' ’ ‘ ʼ ʻ `) and the
--      Catalan middle dot are dropped ("O’Brien" = "obrien", "Gal·la" = "galla");
--   6. runs of white space become one space, none at either end.
-- Step 2 is PostgreSQL's lower(), which follows the database's LC_CTYPE: on a database with a UTF-8 locale
-- (PGlite, and any server created with one) it lower-cases every script; on a "C" locale database only ASCII.
-- The capitals of step 4 are mapped explicitly, so Latin names fold alike on any database; Cyrillic, Greek and
-- other scripts' capitals need a UTF-8 locale (docs/README: create the database with one).
-- The function is the one definition: the stored keys below are generated from it, and the search
-- folds its terms with it (repository.ts), so a term and a name always fold alike.
--
-- The keys are generated columns: PostgreSQL computes them on every insert and update, whoever writes
-- the row (the service, a seed, an operator's SQL), and this ALTER fills them for the existing rows in
-- the migration's own transaction: no window with unfilled rows, no start-up pass, nothing for two
-- instances to race on (migrations run under the migration lock). Changing the folding later means a
-- new migration that replaces the function and refills the keys (UPDATE patients SET given_name =
-- given_name recomputes them).
CREATE FUNCTION atrium_fold_name(name text) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN btrim(regexp_replace(
    translate(
      replace(replace(replace(replace(replace(replace(replace(replace(
        regexp_replace(lower(normalize(name, NFKD)), '[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]', '', 'g'),
        'ß', 'ss'), 'ẞ', 'ss'), 'æ', 'ae'), 'Æ', 'ae'), 'œ', 'oe'), 'Œ', 'oe'), 'þ', 'th'), 'Þ', 'th'),
      'øłđðħıŧŋƀǥɨƚʉƶςØŁĐÐĦŦŊɃǤƗȽɄƵ-‐‒–—―''’‘ʼʻ`·',
      'olddhitnbgiluzσolddhtnbgiluz      '),
    '\s+', ' ', 'g'));--> statement-breakpoint
ALTER TABLE "patients"
  ADD COLUMN "given_name_key" text NOT NULL GENERATED ALWAYS AS (atrium_fold_name("given_name")) STORED,
  ADD COLUMN "family_name_key" text NOT NULL GENERATED ALWAYS AS (atrium_fold_name("family_name")) STORED;--> statement-breakpoint
-- The duplicate check's equality on both keys, and family names starting with a term (text_pattern_ops
-- serves LIKE 'term%' whatever the database's collation). It replaces the index on the raw family name,
-- which no query uses any more.
CREATE INDEX "patients_name_key_idx" ON "patients" USING btree ("workspace_id", "family_name_key" text_pattern_ops, "given_name_key" text_pattern_ops);--> statement-breakpoint
DROP INDEX "patients_name_idx";
