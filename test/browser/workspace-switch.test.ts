import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, signIn, startHarness, type TestWorkspace, uniqueSuffix } from './harness.js';

describe('workspace switcher', () => {
  let harness: BrowserHarness;
  let first: TestWorkspace;
  let second: TestWorkspace;

  beforeAll(async () => {
    harness = await startHarness();
    first = await harness.createWorkspace({ name: `North Clinic ${uniqueSuffix()}`, tier: 'standard' });
    second = await harness.createWorkspace({ name: `South Clinic ${uniqueSuffix()}`, tier: 'enterprise' });
    // The first workspace's admin is also a member of the second.
    await harness.addMember(second.id, { email: first.admin.email, name: first.admin.name, role: 'member' });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('switches workspace and updates the header and the data', async () => {
    const page = await harness.newPage();
    await signIn(page, first.admin.email, first.admin.password);

    const header = page.getByTestId('workspace-name');
    const startName = await header.textContent();
    expect([first.name, second.name]).toContain(startName);
    const target = startName === first.name ? second : first;

    await page.getByLabel('Switch workspace').selectOption(target.id);
    await expect.poll(() => header.textContent()).toBe(target.name);
    expect((await page.getByTestId('workspace-tier').textContent())?.toLowerCase()).toBe(target.tier);
    expect(await page.getByLabel('Switch workspace').inputValue()).toBe(target.id);

    // The switch is server-side: a reload stays in the new workspace.
    await page.reload();
    await expect.poll(() => header.textContent()).toBe(target.name);
  });

  it("leaves a page of one record for its list, since the record is the old workspace's", async () => {
    const page = await harness.newPage();
    await signIn(page, first.admin.email, first.admin.password);
    const header = page.getByTestId('workspace-name');
    await page.getByLabel('Switch workspace').selectOption(first.id);
    await expect.poll(() => header.textContent()).toBe(first.name);
    const made = await page.evaluate(async () => {
      const res = await fetch('/api/v1/patients', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
        body: JSON.stringify({ givenName: 'Wren', familyName: 'Okoye', dateOfBirth: '1980-02-03' }),
      });
      return (await res.json()) as { id: string };
    });
    await page.goto(`/patients/${made.id}`);
    await page.getByRole('heading', { name: /Okoye/ }).waitFor();

    await page.getByLabel('Switch workspace').selectOption(second.id);
    await expect.poll(() => header.textContent()).toBe(second.name);
    await expect.poll(() => new URL(page.url()).pathname).toBe('/patients');
    expect(await page.getByText('Patient not found').count()).toBe(0);

    // The calendar keeps its date and view, not the old workspace's patient.
    await page.goto(`/calendar?date=2026-12-07&view=day&patient=${made.id}`);
    await page.getByTestId('view-day').waitFor();
    await page.getByLabel('Switch workspace').selectOption(first.id);
    await expect.poll(() => header.textContent()).toBe(first.name);
    await expect
      .poll(() => {
        const url = new URL(page.url());
        return `${url.pathname} ${[...url.searchParams.keys()].sort().join(',')}`;
      })
      .toBe('/calendar date,view');
    expect(new URL(page.url()).searchParams.get('date')).toBe('2026-12-07');
  });
});
