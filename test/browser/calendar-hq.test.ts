// All locations (HQ view, Enterprise): an organization's two clinics in one calendar, each event named by its
// location, in the week and on a phone's day list.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, type BrowserHarness, signIn, startHarness, type TestWorkspace, uniqueSuffix } from './harness.js';

describe('calendar: All locations', () => {
  let harness: BrowserHarness;
  let main: TestWorkspace;
  let branch: TestWorkspace;
  const today = new Date().toISOString().slice(0, 10);

  /** Creates an event in the signed-in workspace's first calendar, today at `hour` UTC. */
  const addEvent = (page: Page, title: string, hour: number) =>
    page.evaluate(
      async ({ title, start, end }) => {
        const calendars = (await (await fetch('/api/v1/calendar/calendars')).json()) as { items: { id: string }[] };
        const res = await fetch('/api/v1/calendar/events', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
          body: JSON.stringify({ calendar: calendars.items[0].id, draft: { title, start, end } }),
        });
        return res.status;
      },
      {
        title,
        start: `${today}T${String(hour).padStart(2, '0')}:00:00Z`,
        end: `${today}T${String(hour).padStart(2, '0')}:30:00Z`,
      },
    );
  const switchTo = (page: Page, workspaceId: string) =>
    page.evaluate(
      async (id) =>
        (
          await fetch('/api/v1/auth/switch-workspace', {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
            body: JSON.stringify({ workspaceId: id }),
          })
        ).status,
      workspaceId,
    );

  beforeAll(async () => {
    harness = await startHarness();
    const org = await harness.createOrganization();
    main = await harness.createWorkspace({
      name: `Riverside ${uniqueSuffix()}`,
      tier: 'enterprise',
      organizationId: org.id,
    });
    branch = await harness.createWorkspace({
      name: `Harbor ${uniqueSuffix()}`,
      tier: 'standard',
      organizationId: org.id,
    });
    await harness.addMember(branch.id, { email: main.admin.email, name: main.admin.name, role: 'admin' });

    // Each clinic connects a calendar and books a visit today.
    const page = await harness.newPage();
    await signIn(page, main.admin.email, main.admin.password);
    expect(await switchTo(page, main.id)).toBe(200);
    await page.goto('/calendar');
    await page.getByTestId('connect-google').click();
    await page.waitForURL(/\/calendar/);
    await page.getByTestId('connection').first().waitFor();
    expect(await addEvent(page, 'Riverside intake', 14)).toBe(201);
    expect(await switchTo(page, branch.id)).toBe(200);
    await page.goto('/calendar');
    await page.getByTestId('connect-microsoft').click();
    await page.waitForURL(/\/calendar/);
    await page.getByTestId('connection').first().waitFor();
    expect(await addEvent(page, 'Harbor therapy', 16)).toBe(201);
    expect(await switchTo(page, main.id)).toBe(200);
    await page.close();
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('the week shows both clinics, a colour and a legend entry per location', async () => {
    const page = await harness.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, main.admin.email, main.admin.password);
    await page.goto(`/calendar?date=${today}`);
    await page.getByTestId('all-locations').click();
    await expect.poll(() => new URL(page.url()).searchParams.get('scope')).toBe('organization');
    await page.locator('.fc-event').filter({ hasText: 'Harbor therapy' }).waitFor();
    await page.locator('.fc-event').filter({ hasText: 'Riverside intake' }).waitFor();
    await expect
      .poll(() => page.getByTestId('calendar-legend').locator('li').allTextContents())
      .toEqual(expect.arrayContaining([main.name, branch.name]));
    expect(await page.getByRole('heading', { name: 'Locations' }).count()).toBe(1);
    expect(await axeProblems(page, '.calendar-page')).toEqual([]);
    await page.close();
  });

  it("on a phone, the day's list offers All locations and names each event's clinic", async () => {
    const page = await harness.newPage({ phone: true });
    await signIn(page, main.admin.email, main.admin.password);
    await page.goto(`/calendar?date=${today}`);
    await page.getByTestId('all-locations').tap();
    await expect.poll(() => new URL(page.url()).searchParams.get('scope')).toBe('organization');
    const harbor = page.locator('.event-chip-button').filter({ hasText: 'Harbor therapy' });
    await harbor.waitFor();
    expect(await harbor.getByTestId('event-location-name').textContent()).toBe(branch.name);
    const riverside = page.locator('.event-chip-button').filter({ hasText: 'Riverside intake' });
    expect(await riverside.getByTestId('event-location-name').textContent()).toBe(main.name);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await axeProblems(page, '.calendar-page')).toEqual([]);
    await page.close();
  });
});
