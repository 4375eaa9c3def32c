/**
 * The patient record: demographics edited in place (a duplicate MRN is refused next to the field),
 * insurance coverage, authorizations with units remaining, SOAP notes written and signed, claims
 * submitted and their outcome, the audit trail for admins only, and break-glass asking for a reason.
 */
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BrowserHarness,
  signIn,
  startHarness,
  type TestWorkspace,
  uniqueSuffix,
  unlessAlreadyHandled,
} from './harness.js';

async function createPatient(page: Page, body: Record<string, string>): Promise<string> {
  return page.evaluate(async (input) => {
    const response = await fetch('/api/v1/patients', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
      body: JSON.stringify(input),
    });
    return ((await response.json()) as { id: string }).id;
  }, body);
}

/** The instant of a wall-clock time in New York (`YYYY-MM-DD`, hours, minutes), EST or EDT as that day has it. */
function newYorkTime(day: string, hours: number, minutes: number): Date {
  const [y, m, d] = day.split('-').map(Number);
  const asUtc = Date.UTC(y, m - 1, d, hours, minutes);
  const zone = new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', timeZoneName: 'shortOffset' })
    .formatToParts(new Date(asUtc))
    .find((part) => part.type === 'timeZoneName')?.value;
  const offsetHours = Number(/GMT([+-]\d+)/.exec(zone ?? '')?.[1] ?? 0);
  return new Date(asUtc - offsetHours * 3_600_000);
}

const usDate = (day: string) =>
  new Date(`${day}T00:00:00Z`).toLocaleDateString('en-US', { timeZone: 'UTC', dateStyle: 'medium' });

const seriousViolations = async (page: Page, within: string) =>
  (
    await new AxeBuilder({ page }).include(within).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze()
  ).violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);

describe('patient record', () => {
  let harness: BrowserHarness;
  let workspace: TestWorkspace;
  let member: { email: string; password: string };

  beforeAll(async () => {
    harness = await startHarness();
    workspace = await harness.createWorkspace({ tier: 'advanced' });
    member = { email: `member-${uniqueSuffix()}@example.test`, password: `pw-${uniqueSuffix()}-${uniqueSuffix()}` };
    await harness.addMember(workspace.id, { ...member, name: 'Nora Nurse', role: 'member' });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('edits demographics in place and shows a duplicate MRN next to the field', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    await createPatient(page, { givenName: 'Taken', familyName: 'Mrn', mrn: 'DUP-1' });
    const id = await createPatient(page, { givenName: 'Maria', familyName: 'Lopez', dateOfBirth: '1980-03-02' });
    await page.goto(`/patients/${id}`);
    await page.getByTestId('patient-record').waitFor();
    expect(await page.getByTestId('record-name').textContent()).toBe('Maria Lopez');

    await page.getByLabel('MRN').fill('DUP-1');
    await page.getByRole('button', { name: 'Save changes' }).click();
    const mrnError = page.getByTestId('field-error-mrn');
    await mrnError.waitFor();
    expect(await mrnError.textContent()).toBe('Another patient already has this MRN.');

    // An impossible birth date is refused before it is sent, in plain words.
    await page.getByLabel('MRN').fill('LOP-1');
    await page.getByLabel('Date of birth').fill('2999-01-01');
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.getByTestId('field-error-dateOfBirth').textContent()).toContain('future');
    await page.getByLabel('Date of birth').fill('1980-03-02');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved Maria Lopez').first().waitFor();
    await expect.poll(() => page.getByTestId('patient-record').textContent()).toContain('MRN LOP-1');
  });

  it('records coverage, an authorization, a signed note and a paid claim; admins see the audit trail', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const id = await createPatient(page, { givenName: 'John', familyName: 'Smith', dateOfBirth: '1975-06-30' });
    await page.goto(`/patients/${id}?tab=coverage`);
    await page.getByTestId('edit-coverage').click();
    await page.getByLabel('Insurer').fill('Acme Health');
    await page.getByLabel('Payer id').fill('ACME1');
    await page.getByLabel('Member id').fill('M-123');
    await page.getByRole('button', { name: 'Save coverage' }).click();
    await expect.poll(() => page.getByTestId('coverage').textContent()).toContain('Acme Health');
    expect(new URL(page.url()).searchParams.get('tab')).toBe('coverage');

    await page.getByTestId('tab-authorizations').click();
    await page.getByTestId('add-authorization').click();
    const dialog = page.getByTestId('authorization-dialog');
    await dialog.getByLabel('Service').fill('Physical therapy');
    await dialog.getByLabel('Units').fill('12');
    expect(await dialog.getByLabel('Valid from').getAttribute('type')).toBe('date');
    await dialog.getByLabel('Valid from').fill('2026-01-01');
    await dialog.getByLabel('Valid to').fill('2027-12-31');
    await dialog.getByRole('button', { name: 'Add authorization' }).click();
    await page.getByTestId('authorization').waitFor();
    expect(await page.getByTestId('units-remaining').textContent()).toBe('12');

    await page.getByTestId('tab-notes').click();
    await page.getByTestId('write-note').click();
    await page.getByLabel('Subjective').fill('Knee pain after running');
    await page.getByLabel('Plan').fill('PT twice a week');
    await page.getByRole('button', { name: 'Save draft' }).click();
    const note = page.getByTestId('note').first();
    await expect.poll(() => note.getAttribute('data-status')).toBe('draft');
    await note.getByTestId('sign-note').click();
    // Signing is final: it asks first.
    await page.getByTestId('confirm-sign-note').click();
    await expect.poll(() => note.getAttribute('data-status')).toBe('signed');
    expect(await note.getByTestId('sign-note').count()).toBe(0);

    await page.getByTestId('tab-claims').click();
    await page.getByTestId('submit-claim').click();
    const claimDialog = page.getByTestId('claim-dialog');
    expect(await claimDialog.getByLabel('Payer').inputValue()).toBe('Acme Health');
    // Dates are the browser's date field (typed 03/14/2026 at a US desk), as on the authorization; one typed in
    // part is refused where it is, not sent as "no date".
    expect(await claimDialog.getByLabel('Service date').getAttribute('type')).toBe('date');
    expect(await dialog.count()).toBe(0);
    await claimDialog.getByLabel('Amount (USD)').fill('125.50');
    await claimDialog.getByLabel('Service date').focus();
    await page.keyboard.type('03');
    await claimDialog.getByRole('button', { name: 'Submit claim' }).click();
    await expect.poll(() => claimDialog.getByText('Enter the whole date (month, day and year)').count()).toBe(1);
    await claimDialog.getByLabel('Service date').fill('2026-03-14');
    await claimDialog.getByLabel('Billing codes').fill('97110, 97140');
    await claimDialog.getByRole('button', { name: 'Submit claim' }).click();
    const claim = page.getByTestId('claim').first();
    await expect.poll(() => claim.getAttribute('data-status')).toBe('submitted');
    expect(await claim.textContent()).toContain('$125.50');
    await claim.getByTestId('claim-paid').click();
    await page.getByTestId('confirm-claim-answer').click();
    await expect.poll(() => claim.getByTestId('claim-status').textContent()).toBe('Paid');

    // Break-glass asks for a reason (too short is refused), then the audit trail shows it.
    // A declaration for the audit (no record is locked), not an alarm on every record: a quiet secondary action.
    const declare = page.getByTestId('break-glass');
    expect(await declare.textContent()).toBe('Emergency access…');
    expect(await declare.getAttribute('class')).not.toContain('danger');
    await declare.click();
    const glass = page.getByTestId('break-glass-dialog');
    await glass.getByLabel('Reason').fill('urgent');
    await glass.getByTestId('confirm-break-glass').click();
    await glass.getByTestId('field-error-reason').waitFor();
    await glass.getByLabel('Reason').fill('Patient unconscious in the ER, need history');
    await glass.getByTestId('confirm-break-glass').click();
    await expect.poll(() => glass.isVisible()).toBe(false);
    await page.getByTestId('tab-audit').click();
    await expect
      .poll(() => page.getByTestId('patient-audit').textContent())
      .toContain('Patient unconscious in the ER, need history');
    // Who did it, by name.
    await expect.poll(() => page.getByTestId('audit-who').first().textContent()).toBe(workspace.admin.name);
  });

  it('does not show the audit trail to members', async () => {
    const admin = await harness.newPage();
    await signIn(admin, workspace.admin.email, workspace.admin.password);
    const id = await createPatient(admin, { givenName: 'Ann', familyName: 'Member' });
    const page = await harness.newPage();
    await signIn(page, member.email, member.password);
    await page.goto(`/patients/${id}?tab=audit`);
    await page.getByTestId('patient-record').waitFor();
    expect(await page.getByTestId('tab-audit').count()).toBe(0);
    expect(await page.getByTestId('tab-demographics').getAttribute('aria-selected')).toBe('true');
  });

  it("shows the patient's appointments, upcoming and earlier, and opens one in the calendar", async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const id = await createPatient(page, { givenName: 'Vera', familyName: `Visits${uniqueSuffix()}` });
    const other = await createPatient(page, { givenName: 'Other', familyName: 'Person' });
    await page.goto(`/patients/${id}?tab=appointments`);
    // No calendar yet: the tab says so, and where to connect one.
    await page.getByText('No calendars connected').waitFor();
    await page.goto('/calendar');
    await page.getByTestId('connect-google').click();
    await page.waitForURL(/\/calendar/);
    await page.getByTestId('connection').first().waitFor();
    await page.evaluate(
      async ({ id, other }) => {
        const calendars = await (await fetch('/api/v1/calendar/calendars')).json();
        const at = (days: number) => {
          const d = new Date();
          d.setUTCDate(d.getUTCDate() + days);
          d.setUTCHours(15, 0, 0, 0);
          return d;
        };
        const create = (title: string, days: number, patientId: string) =>
          fetch('/api/v1/calendar/events', {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
            body: JSON.stringify({
              calendar: calendars.items[0].id,
              draft: {
                title,
                start: at(days).toISOString(),
                end: new Date(at(days).getTime() + 2_700_000).toISOString(),
                patientId,
              },
            }),
          });
        await create('Physio session', 2, id);
        await create('Intake', -3, id);
        await create('Someone else', 2, other);
      },
      { id, other },
    );
    await page.goto(`/patients/${id}?tab=appointments`);
    const upcoming = page.getByTestId('appointments-upcoming');
    await upcoming.waitFor();
    expect(await upcoming.getByTestId('appointment').count()).toBe(1);
    expect(await upcoming.textContent()).toContain('Physio session');
    expect(await page.getByTestId('appointments-earlier').textContent()).toContain('Intake');
    expect(await page.getByTestId('patient-appointments').textContent()).not.toContain('Someone else');
    // At 390 px the cards fit the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(
      0,
    );
    await upcoming.getByRole('link', { name: 'Open in calendar' }).click();
    await page.waitForURL(/\/calendar\?/);
    expect(new URL(page.url()).searchParams.get('view')).toBe('day');
    await page.getByText('Physio session').first().waitFor();

    // Book the next visit from the record: the calendar says for whom, and the new event starts with them.
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.goto(`/patients/${id}?tab=appointments`);
    await page.getByTestId('book-visit').click();
    const banner = page.getByTestId('booking-for');
    await expect.poll(() => banner.textContent()).toContain('Vera Visits');
    // New event first (a keyboard's way); a free time in the grid is clicked.
    expect(await banner.textContent()).toContain('press New event, or click a free time in the calendar');
    // A phone's day list has no time slots to choose: the banner names the one way, New event.
    await page.setViewportSize({ width: 390, height: 844 });
    await expect.poll(() => banner.textContent()).not.toContain('free time');
    expect(await banner.textContent()).toContain('press New event');
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.getByTestId('new-event').click();
    await page.getByTestId('event-dialog').waitFor();
    await expect.poll(() => page.getByTestId('event-patient').getByRole('combobox').inputValue()).toContain('Visits');
    const day = new Date(Date.now() + 5 * 86_400_000);
    const ymd = `${day.getFullYear()}-${String(day.getMonth() + 1).padStart(2, '0')}-${String(day.getDate()).padStart(2, '0')}`;
    await page.getByTestId('event-title').fill('Follow-up visit');
    await page.getByTestId('event-date').fill(ymd);
    await page.getByTestId('event-start').fill('11:00');
    await page.getByTestId('event-end').fill('11:30');
    await page.getByTestId('event-save').click();
    await page.getByTestId('event-dialog').waitFor({ state: 'detached' });
    await banner.getByRole('link', { name: 'Back to the record' }).click();
    await expect.poll(() => page.getByTestId('appointments-upcoming').textContent()).toContain('Follow-up visit');
  });

  it('finds a patient from anywhere with Ctrl+K by name, date of birth or MRN, keyboard only', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const id = await createPatient(page, {
      givenName: 'Octavia',
      familyName: `Butler${uniqueSuffix()}`,
      dateOfBirth: '1947-06-22',
      mrn: `OB-${uniqueSuffix()}`,
    });
    const patient = await page.evaluate(
      async (pid) => (await (await fetch(`/api/v1/patients/${pid}`)).json()) as { familyName: string; mrn: string },
      id,
    );
    await page.goto('/messages');
    await page.getByTestId('open-search').waitFor();
    // A birth date as stored, or as a US front desk types it (month first).
    for (const query of [`Octavia ${patient.familyName}`, '1947-06-22', '06/22/1947', '6/22/1947', patient.mrn]) {
      await page.keyboard.press('Control+k');
      const palette = page.getByTestId('command-palette');
      await palette.waitFor();
      await page.keyboard.type(query);
      await palette.getByTestId('palette-result').filter({ hasText: patient.familyName }).first().waitFor();
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Enter');
      await page.getByTestId('patient-record').waitFor();
      expect(new URL(page.url()).pathname).toBe(`/patients/${id}`);
      await page.goto('/messages');
      await page.getByTestId('open-search').waitFor();
    }
  });

  it('Ctrl+K: Enter pressed while the results are still for what was typed before opens nothing the new text does not match', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const family = `Quill${uniqueSuffix()}`;
    const hans = await createPatient(page, { givenName: 'Hans', familyName: family });
    const josefa = await createPatient(page, { givenName: 'Josefa', familyName: `${family}mann` });
    await page.goto('/messages');
    await page.getByTestId('open-search').waitFor();
    await page.keyboard.press('Control+k');
    const palette = page.getByTestId('command-palette');
    await palette.waitFor();
    await page.keyboard.type(family.toLowerCase());
    // The exact family name ranks first.
    await expect.poll(() => palette.getByTestId('palette-result').first().textContent()).toContain('Hans');
    // Typing on and pressing Enter at once: the list still shows the answer for the shorter text (the answer
    // for the longer one takes a while, as on a slow line, so this holds on a busy machine too).
    const slow = (url: URL) => url.pathname === '/api/v1/patients' && /mann$/.test(url.searchParams.get('q') ?? '');
    await page.route(slow, async (route) => {
      await new Promise((r) => setTimeout(r, 1000));
      await route.continue().catch(unlessAlreadyHandled);
    });
    await page.keyboard.type('mann');
    await page.keyboard.press('Enter');
    // Hans is not among the matches for what is typed: the palette stays open on them, nothing opened.
    await expect
      .poll(() => palette.getByTestId('palette-result').first().textContent(), { timeout: 5000 })
      .toContain('Josefa');
    // …and stays so a while after that answer came (nothing opens on it by itself).
    await page.waitForTimeout(400);
    expect(new URL(page.url()).pathname).toBe('/messages');
    expect(await palette.isVisible()).toBe(true);
    await page.keyboard.press('Enter');
    await page.getByTestId('patient-record').waitFor();
    expect(new URL(page.url()).pathname).toBe(`/patients/${josefa}`);
    expect(new URL(page.url()).pathname).not.toBe(`/patients/${hans}`);
    await page.unroute(slow);
    await page.close();
  });

  it('says who wrote and who signed each note; only the author edits a draft or signs it, and errors stay in the dialog', async () => {
    const lee = { email: `lee-${uniqueSuffix()}@example.test`, password: `pw-${uniqueSuffix()}-${uniqueSuffix()}` };
    await harness.addMember(workspace.id, { ...lee, name: 'Dr. Lee', role: 'member', isProvider: true });
    const doctor = await harness.newPage();
    await signIn(doctor, lee.email, lee.password);
    const id = await createPatient(doctor, { givenName: 'Noah', familyName: `Notes${uniqueSuffix()}` });
    await doctor.goto(`/patients/${id}?tab=notes`);
    await doctor.getByTestId('write-note').click();
    await doctor.getByLabel('Subjective').fill('Knee pain after running');
    await doctor.getByLabel('Plan').fill('PT once a week');
    await doctor.getByRole('button', { name: 'Save draft' }).click();
    const draft = doctor.getByTestId('note').first();
    await expect.poll(() => draft.getAttribute('data-status')).toBe('draft');
    expect(await draft.getByTestId('note-byline').textContent()).toMatch(/^Written by Dr\. Lee on \w{3} \d+, \d{4}/);

    // The front desk sees the draft and who wrote it, and is offered neither Sign nor Edit.
    const desk = await harness.newPage();
    await signIn(desk, member.email, member.password);
    await desk.goto(`/patients/${id}?tab=notes`);
    const seen = desk.getByTestId('note').first();
    await seen.waitFor();
    expect(await seen.getByTestId('note-byline').textContent()).toContain('Written by Dr. Lee');
    expect(await seen.getByTestId('sign-note').count()).toBe(0);
    expect(await seen.getByTestId('edit-note').count()).toBe(0);
    expect(await seen.getByTestId('note-author-only').textContent()).toBe(
      'Only Dr. Lee can change or sign this draft.',
    );

    // The author changes the draft.
    await draft.getByTestId('edit-note').click();
    const edit = doctor.getByTestId('edit-note-dialog');
    expect(await edit.getByLabel('Plan').inputValue()).toBe('PT once a week');
    await edit.getByLabel('Plan').fill('PT twice a week');
    await edit.getByLabel('Assessment').fill('Patellofemoral pain');
    expect(await seriousViolations(doctor, '[data-testid="edit-note-dialog"]')).toEqual([]);
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.waitFor({ state: 'detached' });
    await expect.poll(() => draft.textContent()).toContain('PT twice a week');
    expect(await draft.textContent()).toContain('Patellofemoral pain');

    // Signed elsewhere meanwhile (another tab) while the draft is being changed here: saving says why it
    // failed and keeps the dialog and what was typed; closing it shows the note as it now is.
    const noteId = await doctor.evaluate(
      async (patientId) =>
        ((await (await fetch(`/api/v1/notes?patientId=${patientId}`)).json()) as { items: { id: string }[] }).items[0]
          .id,
      id,
    );
    const signElsewhere = () =>
      doctor.evaluate(
        (note) => fetch(`/api/v1/notes/${note}/sign`, { method: 'POST', headers: { 'x-requested-with': 'fetch' } }),
        noteId,
      );
    await draft.getByTestId('edit-note').click();
    await signElsewhere();
    await edit.getByLabel('Plan').fill('PT three times a week');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.getByTestId('form-error').waitFor();
    expect(await edit.getByTestId('form-error').textContent()).toMatch(/signed/i);
    expect(await edit.getByLabel('Plan').inputValue()).toBe('PT three times a week');
    // The focus is back in the dialog, so Escape closes it.
    await expect
      .poll(() => doctor.evaluate(() => document.activeElement?.closest('[data-testid="edit-note-dialog"]') !== null))
      .toBe(true);
    await doctor.keyboard.press('Escape');
    await edit.waitFor({ state: 'detached' });
    await expect.poll(() => draft.getAttribute('data-status')).toBe('signed');

    // A fresh draft signed from here: the signed note takes the focus and says who signed it, and when.
    await doctor.getByTestId('write-note').click();
    await doctor.getByLabel('Subjective').fill('Follow-up: better');
    await doctor.getByRole('button', { name: 'Save draft' }).click();
    const second = doctor.getByTestId('note').filter({ hasText: 'Follow-up: better' });
    await expect.poll(() => second.getAttribute('data-status')).toBe('draft');
    await second.getByTestId('sign-note').click();
    await doctor.getByTestId('confirm-sign-note').click();
    await expect.poll(() => second.getAttribute('data-status')).toBe('signed');
    await expect
      .poll(() =>
        doctor.evaluate(() => {
          const focused = document.activeElement;
          return focused?.getAttribute('data-testid') === 'note-title' ? focused.closest('li')?.textContent : null;
        }),
      )
      .toContain('Follow-up: better');
    expect(await second.getByTestId('note-signed-by').textContent()).toMatch(/^Signed by Dr\. Lee on \w{3} \d+, \d{4}/);
    expect(await second.getByTestId('edit-note').count()).toBe(0);
  });

  it('shows every tab at 390 px (they wrap instead of hiding behind a sideways scroll)', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const id = await createPatient(page, { givenName: 'Tab', familyName: 'Wrap' });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`/patients/${id}`);
    await page.getByTestId('patient-record').waitFor();
    const tabs = page.getByRole('tab');
    expect(await tabs.allTextContents()).toEqual([
      'Demographics',
      'Appointments',
      'Insurance',
      'Authorizations',
      'Notes',
      'Claims',
      'Messages',
      'Audit trail',
    ]);
    const list = page.getByRole('tablist');
    const box = await list.boundingBox();
    for (const tab of await tabs.all()) {
      const tabBox = await tab.boundingBox();
      expect(tabBox && box && tabBox.x >= box.x - 1 && tabBox.x + tabBox.width <= box.x + box.width + 1).toBe(true);
    }
    expect(await list.evaluate((el) => el.scrollWidth - el.clientWidth)).toBe(0);
    await page.getByRole('tab', { name: 'Messages' }).click();
    expect(new URL(page.url()).searchParams.get('tab')).toBe('messages');
  });
  it('insurance entered on a New York evening is on file since that day, not the UTC date (already tomorrow)', async () => {
    const page = await harness.newPage({ timezoneId: 'America/New_York' });
    // 7:37 PM in New York on the day before the UTC date (the server's date is the real one).
    const utcToday = new Date().toISOString().slice(0, 10);
    const nyDay = new Date(Date.parse(`${utcToday}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    await page.clock.setFixedTime(newYorkTime(nyDay, 19, 37));
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const id = await createPatient(page, { givenName: 'Eve', familyName: `Evening${uniqueSuffix()}` });
    await page.goto(`/patients/${id}?tab=coverage`);
    await page.getByTestId('edit-coverage').click();
    await page.getByLabel('Insurer').fill('Aetna');
    await page.getByLabel('Payer id').fill('AETNA');
    await page.getByLabel('Member id').fill('W123456789');
    await page.getByRole('button', { name: 'Save coverage' }).click();
    const coverage = page.getByTestId('coverage');
    await expect.poll(() => coverage.textContent()).toContain('W123456789');
    expect(await coverage.textContent()).toContain(`On file since${usDate(nyDay)}`);
    expect(await coverage.textContent()).not.toContain(usDate(utcToday));
  });

  it('keeps a half-typed change on every tab while the record is open (insurance, demographics, a note)', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const id = await createPatient(page, { givenName: 'Draft', familyName: `Keeper${uniqueSuffix()}`, mrn: 'DK-1' });
    await page.evaluate(
      (patientId) =>
        fetch(`/api/v1/patients/${patientId}/coverage`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
          body: JSON.stringify({ payerName: 'Aetna', payerId: 'AETNA', memberId: 'OLD-1' }),
        }),
      id,
    );
    await page.goto(`/patients/${id}`);
    const panel = page.getByRole('tabpanel');
    await panel.getByLabel('MRN').fill('DK-2');

    await page.getByTestId('tab-coverage').click();
    await page.getByTestId('edit-coverage').click();
    await panel.getByLabel('Member id').fill('NEW-2');
    await panel.getByLabel('Group number').fill('GRP-9');

    // A note started, its dialog closed by mistake.
    await page.getByTestId('tab-notes').click();
    await page.getByTestId('write-note').click();
    await page.getByTestId('note-dialog').getByLabel('Subjective').fill('Half a note');
    await page.keyboard.press('Escape');
    await page.getByTestId('note-dialog').waitFor({ state: 'detached' });

    await page.getByTestId('tab-coverage').click();
    await panel.getByTestId('coverage-form').waitFor();
    expect(await panel.getByLabel('Member id').inputValue()).toBe('NEW-2');
    expect(await panel.getByLabel('Group number').inputValue()).toBe('GRP-9');
    await page.getByTestId('tab-demographics').click();
    expect(await panel.getByLabel('MRN').inputValue()).toBe('DK-2');
    await page.getByTestId('tab-notes').click();
    await page.getByTestId('write-note').click();
    expect(await page.getByTestId('note-dialog').getByLabel('Subjective').inputValue()).toBe('Half a note');
    await page.keyboard.press('Escape');
    // Hidden tabs are out of the way: one panel shows, and the page has no axe problems.
    expect(await page.getByRole('tabpanel').count()).toBe(1);
    expect(await seriousViolations(page, '[data-testid="patient-record"]')).toEqual([]);

    // Saved, the change is on file; another patient's record starts with none of this.
    await page.getByTestId('tab-coverage').click();
    await panel.getByRole('button', { name: 'Save coverage' }).click();
    await expect.poll(() => page.getByTestId('coverage').textContent()).toContain('NEW-2');
    const other = await createPatient(page, { givenName: 'Other', familyName: `Record${uniqueSuffix()}` });
    await page.evaluate((path) => {
      history.pushState({}, '', path);
      dispatchEvent(new PopStateEvent('popstate'));
    }, `/patients/${other}?tab=demographics`);
    await expect.poll(() => page.getByTestId('record-name').textContent()).toContain('Other');
    expect(await panel.getByLabel('MRN').inputValue()).toBe('');
  });

  it('edits the date of birth with the same date field as the New patient form; a date typed in part is refused', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const id = await createPatient(page, {
      givenName: 'Dora',
      familyName: `Dates${uniqueSuffix()}`,
      dateOfBirth: '1980-03-02',
    });
    await page.goto(`/patients/${id}`);
    const date = page.getByLabel('Date of birth');
    expect(await date.getAttribute('type')).toBe('date');
    expect(await page.getByTestId('demographics-form').textContent()).not.toContain('YYYY-MM-DD');
    // Month cleared: the date reads as empty, and saving must not clear the birth date on file.
    await date.focus();
    await page.keyboard.press('Backspace');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.getByTestId('field-error-dateOfBirth').textContent()).toContain('whole date');
    expect(await page.getByTestId('patient-record').textContent()).toContain('Born Mar 2, 1980');
    // Typed as at a US front desk: 03/14/1958.
    await date.focus();
    await page.keyboard.type('03141958');
    expect(await date.inputValue()).toBe('1958-03-14');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.getByTestId('patient-record').textContent()).toContain('Born Mar 14, 1958');
  });

  it('appointments: upcoming until they end, Join video only for those, and no join link (with its password) as a place', async () => {
    const page = await harness.newPage({ timezoneId: 'America/New_York' });
    const day = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/New_York' }).format(new Date());
    // 7:35 PM: this morning's visit has ended, the evening one is under way.
    await page.clock.setFixedTime(newYorkTime(day, 19, 35));
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const id = await createPatient(page, { givenName: 'Ada', familyName: `Appointments${uniqueSuffix()}` });
    const at = (hours: number, minutes: number, days = 0) =>
      new Date(newYorkTime(day, hours, minutes).getTime() + days * 86_400_000).toISOString();
    const drafts = [
      { title: 'Morning video visit', start: at(9, 0), end: at(9, 45), conference: 'meet', zoomLikeLocation: true },
      { title: 'Evening video visit', start: at(19, 15), end: at(20, 0), conference: 'meet', zoomLikeLocation: false },
      { title: 'Clinic visit', start: at(10, 0, 1), end: at(10, 45, 1), location: 'Room 2' },
    ];
    await page.evaluate(
      async ({ patientId, drafts }) => {
        const json = { 'content-type': 'application/json', 'x-requested-with': 'fetch' };
        const calendars = await (await fetch('/api/v1/calendar/calendars')).json();
        for (const { zoomLikeLocation, ...draft } of drafts) {
          const created = await (
            await fetch('/api/v1/calendar/events', {
              method: 'POST',
              headers: json,
              body: JSON.stringify({ calendar: calendars.items[0].id, draft: { ...draft, patientId } }),
            })
          ).json();
          // As Zoom writes it: the join link, password and all, as the event's location.
          if (zoomLikeLocation) {
            await fetch('/api/v1/calendar/events', {
              method: 'PATCH',
              headers: json,
              body: JSON.stringify({
                event: created.eventId,
                draft: { location: `${created.event.conference.joinUrl}?pwd=s3cretPwd` },
              }),
            });
          }
        }
      },
      { patientId: id, drafts },
    );
    await page.goto(`/patients/${id}?tab=appointments`);
    const upcoming = page.getByTestId('appointments-upcoming');
    const earlier = page.getByTestId('appointments-earlier');
    await earlier.waitFor();
    expect(await upcoming.getByTestId('appointment').allTextContents()).toEqual([
      expect.stringContaining('Evening video visit'),
      expect.stringContaining('Clinic visit'),
    ]);
    const morning = earlier.getByTestId('appointment').filter({ hasText: 'Morning video visit' });
    expect(await morning.count()).toBe(1);
    expect(await morning.getByRole('link', { name: 'Join video' }).count()).toBe(0);
    expect(await morning.getByTestId('appointment-details').textContent()).not.toMatch(/pwd|http/);
    const evening = upcoming.getByTestId('appointment').filter({ hasText: 'Evening video visit' });
    expect(await evening.getByRole('link', { name: 'Join video' }).count()).toBe(1);
    expect(await upcoming.getByTestId('appointment').filter({ hasText: 'Clinic visit' }).textContent()).toContain(
      'Room 2',
    );
  });

  it('shows an authorization recorded by code under a readable name ("physical-therapy" reads "Physical therapy")', async () => {
    const page = await harness.newPage();
    await signIn(page, workspace.admin.email, workspace.admin.password);
    const id = await createPatient(page, { givenName: 'Paul', familyName: `Therapy${uniqueSuffix()}` });
    await page.evaluate(
      (patientId) =>
        fetch(`/api/v1/patients/${patientId}/authorizations`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-requested-with': 'fetch' },
          body: JSON.stringify({
            service: 'physical-therapy',
            units: 12,
            unitMinutes: 45,
            validFrom: '2026-01-01',
            validTo: '2099-12-31',
          }),
        }),
      id,
    );
    await page.goto(`/patients/${id}?tab=authorizations`);
    // The card's title (its first strong text).
    const title = page.getByTestId('authorization').locator('strong').first();
    await expect.poll(() => title.textContent()).toBe('Physical therapy');
    await page.getByTestId('schedule-sessions').click();
    await expect
      .poll(() => page.getByTestId('schedule-sessions-dialog').getByRole('heading').first().textContent())
      .toBe('Schedule sessions: Physical therapy');
  });
});
