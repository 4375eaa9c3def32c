/**
 * Browser-test harness: starts the real server in-process (fresh database, web/dist, emulators),
 * launches Debian's chromium through playwright-core, and creates users through the operator API.
 *
 * Set ATRIUM_BROWSER_BASE_URL (and ATRIUM_BROWSER_OPERATOR_TOKEN) to run against a server that is
 * already running instead, e.g. `npm start` in another terminal.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { AxeBuilder } from '@axe-core/playwright';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.ATRIUM_CHROMIUM_PATH ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export type Tier = 'free' | 'standard' | 'advanced' | 'enterprise';

export interface TestUser {
  userId: string;
  email: string;
  name: string;
  password: string;
}

export interface TestWorkspace {
  id: string;
  name: string;
  tier: Tier;
  admin: TestUser;
}

export interface BrowserHarness {
  baseUrl: string;
  operatorToken: string;
  browser: Browser;
  /** A fresh browser context (own cookies) and page; closed by `close()`. */
  /**
   * A page in a fresh browser context (signed out), in UTC unless another `timezoneId` is asked for. `phone`: a
   * 390 x 844 touch screen (a phone's: `isMobile`, `hasTouch`, so `(pointer: coarse)` holds and taps are touches).
   */
  newPage(options?: { timezoneId?: string; phone?: boolean }): Promise<Page>;
  /** An organization (operator API): its workspaces are the locations of All locations. */
  createOrganization(name?: string): Promise<{ id: string; name: string }>;
  createWorkspace(options?: { name?: string; tier?: Tier; organizationId?: string }): Promise<TestWorkspace>;
  addMember(
    workspaceId: string,
    member: { email: string; name: string; role: 'admin' | 'member'; password?: string; isProvider?: boolean },
  ): Promise<{ userId: string }>;
  close(): Promise<void>;
}

interface RunningServer {
  baseUrl: string;
  operatorToken: string;
  close(): Promise<void>;
}

async function startServer(): Promise<RunningServer> {
  const external = process.env.ATRIUM_BROWSER_BASE_URL;
  if (external) {
    const operatorToken = process.env.ATRIUM_BROWSER_OPERATOR_TOKEN ?? process.env.ATRIUM_OPERATOR_TOKEN;
    if (!operatorToken) throw new Error('ATRIUM_BROWSER_BASE_URL needs ATRIUM_BROWSER_OPERATOR_TOKEN as well');
    return { baseUrl: external.replace(/\/$/, ''), operatorToken, close: async () => {} };
  }
  // Imported lazily so the external mode above works without loading the server.
  const { startTestServer } = await import('../helpers/server.js');
  return startTestServer();
}

/** axe's serious and critical WCAG 2.1 A/AA findings inside `selector`, in light and dark (the page is left light). */
export async function axeProblems(page: Page, selector: string): Promise<string[]> {
  const found: string[] = [];
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    const results = await new AxeBuilder({ page })
      .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
      .include(selector)
      .analyze();
    for (const v of results.violations)
      if (v.impact === 'serious' || v.impact === 'critical')
        found.push(`${scheme} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return found;
}

/**
 * For a route handler that lets a request through after a delay (a slow line): the test may have removed the
 * route meanwhile (`page.unroute`), and then Playwright has already let the request through, so continuing it
 * again is no error. Any other failure is.
 */
export function unlessAlreadyHandled(err: unknown): void {
  if (!/already handled/i.test(String((err as Error)?.message ?? err))) throw err;
}

export function uniqueSuffix(): string {
  return randomUUID().slice(0, 8);
}

export async function startHarness(): Promise<BrowserHarness> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`No chromium at ${CHROMIUM_PATH}: apt-get install -y chromium (never download browsers)`);
  }
  const server = await startServer();
  let browser: Browser;
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  } catch (error) {
    await server.close();
    throw error;
  }
  const contexts: BrowserContext[] = [];

  async function operator<T>(method: string, path: string, body: unknown): Promise<T> {
    const response = await fetch(`${server.baseUrl}/api/v1/operator${path}`, {
      method,
      headers: { authorization: `Bearer ${server.operatorToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`operator ${method} ${path} → ${response.status}: ${text}`);
    return JSON.parse(text) as T;
  }

  return {
    baseUrl: server.baseUrl,
    operatorToken: server.operatorToken,
    browser,
    async newPage(options = {}) {
      const context = await browser.newContext({
        baseURL: server.baseUrl,
        locale: 'en-US',
        timezoneId: options.timezoneId ?? 'UTC',
        ...(options.phone ? { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true } : {}),
      });
      contexts.push(context);
      context.setDefaultTimeout(15_000);
      return context.newPage();
    },
    async createOrganization(name = `Care group ${uniqueSuffix()}`) {
      return operator<{ id: string; name: string }>('POST', '/organizations', { name });
    },
    async createWorkspace(options = {}) {
      const suffix = uniqueSuffix();
      const name = options.name ?? `Clinic ${suffix}`;
      const tier = options.tier ?? 'standard';
      const admin = { email: `admin-${suffix}@example.test`, name: `Admin ${suffix}`, password: `pw-${randomUUID()}` };
      const created = await operator<{ workspace: { id: string }; admin: { userId: string } }>('POST', '/workspaces', {
        name,
        tier,
        admin,
        organizationId: options.organizationId,
      });
      return { id: created.workspace.id, name, tier, admin: { ...admin, userId: created.admin.userId } };
    },
    async addMember(workspaceId, member) {
      return operator<{ userId: string }>('POST', `/workspaces/${encodeURIComponent(workspaceId)}/members`, member);
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => {});
      await browser.close().catch(() => {});
      await server.close();
    },
  };
}

/** Opens the app and signs in through the form; resolves once the shell shows. */
export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // The account menu shows on every screen size once the shell is up.
  await page.getByTestId('user-menu').waitFor();
}
