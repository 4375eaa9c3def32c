import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, type BrowserHarness, signIn, startHarness, type TestWorkspace, uniqueSuffix } from './harness.js';

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

  const switchTo = async (page: Page, workspace: TestWorkspace) => {
    await page.getByLabel('Switch workspace').selectOption(workspace.id);
    await expect.poll(() => page.getByTestId('workspace-name').textContent()).toBe(workspace.name);
  };
  /** A list of one workspace, asked from `page` (its session moves there for the question, and back). */
  const listIn = (page: Page, workspaceId: string, path: string) =>
    page.evaluate(
      async ([id, url]) => {
        const post = (to: string, body: unknown) =>
          fetch(to, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
            body: JSON.stringify(body),
          });
        const was = ((await (await fetch('/api/v1/me')).json()) as { workspace: { id: string } }).workspace.id;
        await post('/api/v1/auth/switch-workspace', { workspaceId: id });
        const list = (await (await fetch(url)).json()) as { items: Record<string, string>[] };
        await post('/api/v1/auth/switch-workspace', { workspaceId: was });
        return list.items;
      },
      [workspaceId, path] as const,
    );
  const memberIds = async (page: Page, workspaceId: string) =>
    (await listIn(page, workspaceId, '/api/v1/members')).map((m) => m.userId);
  const familyNames = async (page: Page, workspaceId: string) =>
    (await listIn(page, workspaceId, '/api/v1/patients?limit=100')).map((p) => p.familyName);
  /**
   * The navigation's message badges are read every 5 s, and that read alone would bring up the notice once the
   * session moved; answered here without the server, so the action under test is what meets the switch.
   */
  const holdBadgeRefresh = (page: Page) =>
    page.route('**/api/v1/direct-messages?*', (route) =>
      route.request().method() === 'GET'
        ? route.fulfill({ status: 200, json: { items: [], nextCursor: null } })
        : route.continue(),
    );

  describe('two tabs of one session: a switch in one, an action in the other', () => {
    let riverside: TestWorkspace;
    let harbor: TestWorkspace;
    let pat: { userId: string };

    beforeAll(async () => {
      riverside = await harness.createWorkspace({ name: `Riverside Clinic ${uniqueSuffix()}`, tier: 'standard' });
      harbor = await harness.createWorkspace({ name: `Harbor Therapy ${uniqueSuffix()}`, tier: 'standard' });
      // Riverside's admin administers Harbor too; Pat works in both.
      await harness.addMember(harbor.id, { email: riverside.admin.email, name: riverside.admin.name, role: 'admin' });
      const email = `pat-${uniqueSuffix()}@example.test`;
      pat = await harness.addMember(riverside.id, { email, name: 'Pat Doe', role: 'member' });
      await harness.addMember(harbor.id, { email, name: 'Pat Doe', role: 'member' });
    });

    it("removing Pat on the old workspace's members page says the workspace changed, and removes no one", async () => {
      const page = await harness.newPage();
      await signIn(page, riverside.admin.email, riverside.admin.password);
      await switchTo(page, riverside);
      await holdBadgeRefresh(page);
      await page.goto('/admin/members');
      const patRow = page.locator(`[data-testid="member-row"][data-user-id="${pat.userId}"]`);
      await patRow.waitFor();

      // Another tab of the same browser switches to Harbor.
      const other = await page.context().newPage();
      await other.goto('/patients');
      await switchTo(other, harbor);

      // This tab still shows Riverside: Remove Pat. Opening the question reads the calendar accounts again, which
      // already meets the switch; should it not, the removal itself does.
      await patRow.getByTestId('member-remove').click();
      const notice = page.getByTestId('workspace-changed');
      const confirm = page.getByTestId('confirm-remove');
      await confirm.or(notice).first().waitFor();
      // The question may be replaced by the notice at any moment (its read of the calendar accounts meets the
      // switch): answered if it is still there, else the notice is what comes.
      if (await confirm.isVisible()) {
        await Promise.race([confirm.click({ timeout: 10_000 }).catch(() => undefined), notice.waitFor()]);
      }
      await notice.waitFor();
      expect(await notice.textContent()).toContain(
        `This tab was showing ${riverside.name}; you have since switched to ${harbor.name} in another tab. Nothing was changed.`,
      );
      // The one notice, not an error of the page's own: no toast, no dialog, no members table of the old workspace.
      expect(await page.getByText('was not removed').count()).toBe(0);
      expect(await page.getByText('That did not work').count()).toBe(0);
      expect(await page.getByRole('alertdialog').count()).toBe(0);
      expect(await page.getByTestId('members-table').count()).toBe(0);
      expect(await axeProblems(page, '[data-testid="workspace-changed"]')).toEqual([]);
      // The focus is on the notice (the dialog that had it is gone).
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Workspace switched in another tab');

      // Pat is still a member of both.
      expect(await memberIds(other, harbor.id)).toContain(pat.userId);
      expect(await memberIds(other, riverside.id)).toContain(pat.userId);

      // Reload: this tab opens in Harbor, on its members page, with Pat there.
      await page.getByTestId('workspace-changed-reload').click();
      await expect.poll(() => page.getByTestId('workspace-name').textContent()).toBe(harbor.name);
      expect(new URL(page.url()).pathname).toBe('/admin/members');
      await patRow.waitFor();
      expect(await notice.count()).toBe(0);

      // Both tabs now show Harbor: the other tab acts as before.
      await other.goto('/admin/members');
      await other.locator(`[data-testid="member-row"][data-user-id="${pat.userId}"]`).waitFor();
      await other.close();
    });

    it("a new patient from the old workspace's tab lands nowhere", async () => {
      const page = await harness.newPage();
      await signIn(page, riverside.admin.email, riverside.admin.password);
      await switchTo(page, riverside);
      await holdBadgeRefresh(page);
      await page.goto('/patients/new');
      await page.getByLabel('Given name').fill('Wren');
      await page.getByLabel('Family name').fill('Stale-Tab');

      const other = await page.context().newPage();
      await other.goto('/patients');
      await switchTo(other, harbor);

      await page.getByRole('button', { name: 'Create patient' }).click();
      await page.getByTestId('workspace-changed').waitFor();
      expect(await familyNames(other, harbor.id)).not.toContain('Stale-Tab');
      expect(await familyNames(other, riverside.id)).not.toContain('Stale-Tab');
      await other.close();
    });

    it("the old workspace's live inbox stream ends with the switch, and its reconnect is refused", async () => {
      const page = await harness.newPage();
      await signIn(page, riverside.admin.email, riverside.admin.password);
      await switchTo(page, riverside);
      await holdBadgeRefresh(page);
      await page.goto('/inbox');
      // The stream is Riverside's, and named so.
      const opened = await page.waitForRequest((r) => r.url().includes('/api/v1/channels/events'));
      expect(new URL(opened.url()).searchParams.get('workspace')).toBe(riverside.id);
      await expect.poll(() => page.getByTestId('inbox-stream').textContent()).toBe('Live');

      const refused = page.waitForResponse((r) => r.url().includes('/api/v1/channels/events') && r.status() === 409, {
        timeout: 20_000,
      });
      const other = await page.context().newPage();
      await other.goto('/patients');
      await switchTo(other, harbor);

      // No click in this tab: the stream's end and refused reconnect bring up the notice.
      await refused;
      await page.getByTestId('workspace-changed').waitFor();
      await other.close();
    });
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

  it('a very long workspace name gives way in the top bar: search and the account menu keep their one line', async () => {
    const long = await harness.createWorkspace({
      name: `Riverside Community Health Center for Family Medicine, Pediatrics and Behavioral Health ${uniqueSuffix()}`,
    });
    const page = await harness.newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    await signIn(page, long.admin.email, long.admin.password);
    await page.getByTestId('workspace-name').waitFor();
    const heights = await page.evaluate(() =>
      ['.topbar .search-button-label', '.topbar .search-button-kbd', '.topbar .user-name'].map((selector) => {
        const el = document.querySelector(selector) as HTMLElement | null;
        return el
          ? { height: el.getBoundingClientRect().height, lineHeight: parseFloat(getComputedStyle(el).lineHeight) || 24 }
          : null;
      }),
    );
    for (const h of heights) {
      expect(h).not.toBeNull();
      expect(h?.height ?? 0).toBeLessThan(2 * (h?.lineHeight ?? 0));
    }
    const name = page.getByTestId('workspace-name');
    expect(await name.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
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

  it("All locations, kept across a switch into a workspace whose plan lacks it, becomes that workspace's calendar", async () => {
    const page = await harness.newPage();
    await signIn(page, first.admin.email, first.admin.password);
    const header = page.getByTestId('workspace-name');
    await page.getByLabel('Switch workspace').selectOption(second.id);
    await expect.poll(() => header.textContent()).toBe(second.name);
    await page.goto('/calendar?date=2026-12-07');
    // The enterprise workspace offers All locations.
    await page.getByTestId('all-locations').click();
    await expect.poll(() => new URL(page.url()).searchParams.get('scope')).toBe('organization');

    await page.getByLabel('Switch workspace').selectOption(first.id);
    await expect.poll(() => header.textContent()).toBe(first.name);
    // The standard plan has no All locations: its own week, no refusal, and the scope leaves the address.
    await expect.poll(() => new URL(page.url()).searchParams.get('scope')).toBe(null);
    await page.getByRole('heading', { name: 'Calendar', level: 1 }).waitFor();
    await expect.poll(() => page.getByTestId('all-locations').count()).toBe(0);
    await expect.poll(() => page.locator('.notice-error, [role="alert"]').count()).toBe(0);

    // A link to All locations in that workspace (a bookmark) does the same.
    await page.goto('/calendar?date=2026-12-07&scope=organization');
    await expect.poll(() => new URL(page.url()).searchParams.get('scope')).toBe(null);
    await expect.poll(() => page.locator('.notice-error, [role="alert"]').count()).toBe(0);
  });
});
