// Patient search and the duplicate check ignore accents and case (José = Jose, Müller = muller,
// Straße = strasse), and a search lists the best matches first: exact names, then names starting with
// the term, then the rest; newest first within each (migration 0036, repository.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { createPatient, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

type Item = { id: string; givenName: string; familyName: string; mrn: string | null };

async function search(ws: TestWorkspace, query: Record<string, string>) {
  const res = await t.request({
    method: 'GET',
    url: `/api/v1/patients?${new URLSearchParams(query).toString()}`,
    token: ws.admin.token,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { items: Item[]; nextCursor: string | null };
}
const names = (page: { items: Item[] }) => page.items.map((p) => `${p.givenName} ${p.familyName}`);

describe('accent- and case-insensitive search', () => {
  let ws: TestWorkspace;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    ws = await createWorkspace(t);
    for (const [key, body] of Object.entries({
      jose: { givenName: 'José', familyName: 'Müller', dateOfBirth: '1966-02-11' },
      renee: { givenName: 'Renée', familyName: 'García' },
      strasse: { givenName: 'Łukasz', familyName: 'Straße' },
      oster: { givenName: 'Søren', familyName: 'Æbelø' },
      obrien: { givenName: 'Siobhán', familyName: 'O’Brien-Nuñez' },
      plain: { givenName: 'Zoe', familyName: 'Dubois' },
    })) {
      ids[key] = (await createPatient(t, ws.admin.token, body)).id;
    }
  });

  it.each([
    ['Jose', 'jose'],
    ['muller', 'jose'],
    ['MÜLLER', 'jose'],
    ['jose muller', 'jose'],
    ['Muller, Jo', 'jose'],
    ['renee garcia', 'renee'],
    ['Renée García', 'renee'],
    ['RENEE', 'renee'],
    ['strasse', 'strasse'],
    ['lukasz', 'strasse'],
    ['soren aebelo', 'oster'],
    ['obrien', 'obrien'],
    ["o'brien nunez", 'obrien'],
    ['siobhan', 'obrien'],
    ['Zoë', 'plain'],
    ['DUBOÎS', 'plain'],
  ])('q=%s finds %s', async (q, key) => {
    expect((await search(ws, { q })).items.map((p) => p.id)).toEqual([ids[key]]);
  });

  it('a term that folds to nothing matches no name (and is no error)', async () => {
    expect((await search(ws, { q: '’' })).items).toEqual([]);
  });

  it('the duplicate check finds José Müller when typed without accents, and the other way round', async () => {
    const typed = await search(ws, { givenName: 'Jose', familyName: 'Muller', dateOfBirth: '1966-02-11' });
    expect(typed.items.map((p) => p.id)).toEqual([ids.jose]);
    const plain = await createPatient(t, ws.admin.token, {
      givenName: 'Ines',
      familyName: 'Muller',
      dateOfBirth: '1970-01-01',
    });
    const accented = await search(ws, { givenName: 'Inés', familyName: 'MÜLLER', dateOfBirth: '1970-01-01' });
    expect(accented.items.map((p) => p.id)).toEqual([plain.id]);
    // Still exact, not partial: Jos / Mull are other names.
    expect((await search(ws, { givenName: 'Jos', familyName: 'Muller' })).items).toEqual([]);
    expect((await search(ws, { givenName: 'Jose', familyName: 'Mull' })).items).toEqual([]);
  });

  it('a renamed patient is found by the new name only (the keys follow every write)', async () => {
    const p = await createPatient(t, ws.admin.token, { givenName: 'Bjorn', familyName: 'Karlsson' });
    const res = await t.request({
      method: 'PATCH',
      url: `/api/v1/patients/${p.id}`,
      token: ws.admin.token,
      payload: { givenName: 'Björk' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await search(ws, { q: 'bjork karlsson' })).items.map((i) => i.id)).toEqual([p.id]);
    expect((await search(ws, { q: 'bjorn' })).items).toEqual([]);
    expect((await search(ws, { givenName: 'BJORK', familyName: 'karlsson' })).items.map((i) => i.id)).toEqual([p.id]);
  });
});

describe('ranking', () => {
  let ws: TestWorkspace;
  beforeAll(async () => {
    ws = await createWorkspace(t);
    // Oldest first: the better matches are the older ones, so newest-first would list them last.
    for (const [givenName, familyName] of [
      ['Ann', 'Zed'],
      ['Jo', 'Vance'],
      ['Mary', 'Ann'],
      ['Annette', 'Smith'],
      ['Lee', 'Hanna'],
      ['Joanna', 'Anderson'],
      ['Ann', 'Zedd'],
      ['Anne', 'Zed'],
    ]) {
      await createPatient(t, ws.admin.token, { givenName, familyName });
    }
  });

  it('q=Ann: exact names first, then names starting with it, then the rest; newest first within each', async () => {
    expect(names(await search(ws, { q: 'Ann', limit: '8' }))).toEqual([
      'Ann Zedd',
      'Mary Ann',
      'Ann Zed',
      'Anne Zed',
      'Annette Smith',
      'Joanna Anderson',
      'Lee Hanna',
    ]);
  });

  it('q=Jo puts Jo Vance ahead of Joanna; a full name exactly ahead of a longer one', async () => {
    expect(names(await search(ws, { q: 'Jo' }))).toEqual(['Jo Vance', 'Joanna Anderson']);
    expect(names(await search(ws, { q: 'ann zed' }))).toEqual(['Ann Zed', 'Ann Zedd']);
    expect(names(await search(ws, { q: 'Zed, Ann' }))).toEqual(['Ann Zed', 'Anne Zed']);
  });

  it('pages through the ranked list without repeats or gaps', async () => {
    const all = names(await search(ws, { q: 'ann', limit: '50' }));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await search(ws, { q: 'ann', limit: '2', ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...names(page));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all);
    expect(all).toHaveLength(7);
  });

  it('a cursor of the earlier kind (the last id) still pages, newest first as before', async () => {
    const newestFirst = (await search(ws, { q: 'ann', limit: '50' })).items
      .map((p) => p.id)
      .sort()
      .reverse();
    const legacy = Buffer.from(JSON.stringify(newestFirst[1])).toString('base64url');
    const page = await search(ws, { q: 'ann', limit: '2', cursor: legacy });
    expect(page.items.map((p) => p.id)).toEqual(newestFirst.slice(2, 4));
    const next = await search(ws, { q: 'ann', limit: '50', cursor: page.nextCursor! });
    expect(next.items.map((p) => p.id)).toEqual(newestFirst.slice(4));
  });

  it('MRNs: an exact MRN first, then MRNs starting with it; MRNs are not folded', async () => {
    const exact = await createPatient(t, ws.admin.token, { givenName: 'Mrn', familyName: 'One', mrn: 'RC-77' });
    const longer = await createPatient(t, ws.admin.token, { givenName: 'Mrn', familyName: 'Two', mrn: 'RC-770' });
    const inside = await createPatient(t, ws.admin.token, { givenName: 'Mrn', familyName: 'Three', mrn: 'XRC-77' });
    expect((await search(ws, { q: 'rc-77' })).items.map((p) => p.id)).toEqual([exact.id, longer.id, inside.id]);
    expect((await search(ws, { q: 'RC-770' })).items.map((p) => p.id)).toEqual([longer.id]);
  });

  it('finds a birth date written as the US front desk writes it (03/14/1958, 3/14/1958) or 1958/03/14, exactly', async () => {
    const born = await createPatient(t, ws.admin.token, {
      givenName: 'Born',
      familyName: 'Onpi',
      dateOfBirth: '1958-03-14',
    });
    await createPatient(t, ws.admin.token, { givenName: 'Born', familyName: 'Later', dateOfBirth: '1958-03-15' });
    await createPatient(t, ws.admin.token, { givenName: 'Born', familyName: 'Swapped', dateOfBirth: '1958-12-03' });
    for (const q of ['1958-03-14', '03/14/1958', '3/14/1958', '1958/03/14', '1958/3/14']) {
      expect(
        (await search(ws, { q })).items.map((p) => p.id),
        q,
      ).toEqual([born.id]);
    }
    // Month first, as in the US: 12/03 is December 3rd; not a real day matches nothing (and is no error).
    expect(names(await search(ws, { q: '12/3/1958' }))).toEqual(['Born Swapped']);
    expect((await search(ws, { q: '14/03/1958' })).items).toEqual([]);
    expect((await search(ws, { q: '02/30/1958' })).items).toEqual([]);
  });

  it('without a term the list stays newest first, paged by id', async () => {
    const first = await search(ws, { limit: '3' });
    const ids = first.items.map((p) => p.id);
    expect(ids).toEqual([...ids].sort().reverse());
    const rest = await search(ws, { limit: '50', cursor: first.nextCursor! });
    expect(rest.items.every((p) => p.id < ids[2])).toBe(true);
  });
});
