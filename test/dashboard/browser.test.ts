import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDashboardBuilt } from '../../dashboard/build.js';
import { openIdentityStore } from '../../identity/index.js';
import { AccountUserService } from '../../identity/account-user.service.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

/** Where the screenshots go: CI keeps this folder as an artefact (README, "Dashboard"). */
const SCREENSHOTS = path.resolve('artifacts/screenshots');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const OWNER = { email: 'owner@example.com', password: 'owner password 123' };
const VIEWER = { email: 'viewer@example.com', password: 'viewer password 123', name: 'Vera Viewer' };

let platform: TestPlatform;
let adminKey: string;
const contexts: { context: BrowserContext; dir: string }[] = [];
/** Requests any page made to another origin, and CSP violations it reported: both must stay empty. */
const foreignRequests: string[] = [];
const cspViolations: string[] = [];

/** A fresh Chromium profile (its own --user-data-dir), as a new visitor would have. */
async function newVisitor(viewport = { width: 1280, height: 900 }): Promise<Page> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dashboard-chromium-'));
  const context = await chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true, viewport });
  contexts.push({ context, dir });
  const page = context.pages()[0] ?? (await context.newPage());
  const origin = new URL(platform.baseUrl).origin;
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.protocol.startsWith('http') && url.origin !== origin) foreignRequests.push(request.url());
  });
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  return page;
}

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${platform.baseUrl}/dashboard/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });

beforeAll(async () => {
  await ensureDashboardBuilt();
  await mkdir(SCREENSHOTS, { recursive: true });
  platform = await startTestPlatform();
  const orm = await openIdentityStore(platform.databaseUrl);
  try {
    await new AccountUserService(orm.em.fork()).createOwner({ account: 'acme', email: OWNER.email, name: 'Olive Owner', password: OWNER.password, platformAdmin: true });
  } finally {
    await orm.close(true);
  }
  adminKey = await platform.issueKey('operators', 'admin');
}, 180_000);

afterAll(async () => {
  for (const { context, dir } of contexts) {
    await context.close();
    await rm(dir, { recursive: true, force: true });
  }
  await platform?.close();
});

// A browser on a shared CI machine is slow to start pages; each step gets a minute.
describe('the dashboard in Chromium', { timeout: 120_000 }, () => {
  let owner: Page;

  it('serves the app under /dashboard with a strict CSP and no-cache index', async () => {
    const response = await fetch(`${platform.baseUrl}/dashboard/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/https?:/);
    const html = await response.text();
    const asset = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeDefined();
    const script = await fetch(`${platform.baseUrl}/dashboard/${asset}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('cache-control')).toContain('immutable');
    const redirect = await fetch(`${platform.baseUrl}/dashboard`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/dashboard/');
    expect((await fetch(`${platform.baseUrl}/dashboard/assets/missing.js`)).status).toBe(404);
    expect((await fetch(`${platform.baseUrl}/dashboard/swagger-ui/package.json`)).status).toBe(404);
    expect((await fetch(`${platform.baseUrl}/dashboard/swagger-ui/swagger-ui-bundle.js`)).status).toBe(200);
    // App routes are the app (hash routing needs none, but a pasted path must not 404).
    expect((await fetch(`${platform.baseUrl}/dashboard/settings`)).headers.get('content-type')).toContain('text/html');
    const posted = await fetch(`${platform.baseUrl}/dashboard/`, { method: 'POST' });
    expect(posted.status).toBe(405);
    expect(((await posted.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed');
    const settings = (await (await fetch(`${platform.baseUrl}/dashboard/config.json`)).json()) as { openApi: { url: string }[] };
    expect(settings.openApi.map((entry) => entry.url)).toEqual(['/api/v1/openapi.json', '/v1/public/openapi.json']);
    // The API under the same path is not swallowed by the files.
    expect((await fetch(`${platform.baseUrl}/dashboard/api/session`)).status).toBe(401);
  });

  it('signs the owner in and shows the API keys of live mode', async () => {
    owner = await newVisitor();
    await page_signInPage(owner);
    // By keyboard alone: the email field has the focus, Tab moves to the password, Enter submits.
    expect(await owner.evaluate(() => document.activeElement?.id)).toBe('email');
    await owner.keyboard.type(OWNER.email);
    await owner.keyboard.press('Tab');
    expect(await owner.evaluate(() => document.activeElement?.id)).toBe('password');
    await owner.keyboard.type(OWNER.password);
    await owner.keyboard.press('Enter');
    await expect.poll(() => owner.getByRole('heading', { name: 'API keys (live)' }).count(), { timeout: 15_000 }).toBe(1);
    expect(await owner.getByText('Olive Owner · owner · admin').count()).toBe(1);
  });

  it('creates a live key, shows its secret once, the key works on /api/v1, and after revoking it is 401', async () => {
    await owner.getByLabel('New live key name').fill('browser key');
    await owner.getByRole('button', { name: 'Create live key' }).click();
    const secretElement = owner.getByTestId('new-secret');
    await secretElement.waitFor();
    const secret = (await secretElement.textContent())!.trim();
    expect(secret.length).toBeGreaterThan(20);
    await owner.getByRole('cell', { name: 'browser key', exact: true }).waitFor();
    await shot(owner, 'api-keys-secret-shown');

    const members = await platform.request('/api/v1/members', { key: secret });
    expect(members.status).toBe(200);

    // Shown once: a reload lists the key by its prefix, never the secret again; and its use is
    // shown (recorded to the minute, off the request's path, so it may take a reload or two).
    const lastUsed = async () => {
      await owner.reload();
      await owner.getByRole('cell', { name: 'browser key', exact: true }).waitFor();
      return (await owner.locator('tr', { hasText: 'browser key' }).locator('td[data-label="Last used"]').textContent())?.trim();
    };
    await expect.poll(lastUsed, { timeout: 10_000 }).not.toBe('never');
    expect(await owner.getByTestId('new-secret').count()).toBe(0);
    expect(await owner.content()).not.toContain(secret);

    owner.once('dialog', (dialog) => void dialog.accept());
    await owner.getByRole('button', { name: 'Revoke browser key' }).click();
    await owner.getByText('revoked').waitFor();
    await shot(owner, 'api-keys');
    // The revocation holds at once (the key cache is told of it).
    expect((await platform.request('/api/v1/members', { key: secret })).status).toBe(401);
  });

  it('keeps test mode apart: the switch shows test keys only and creates test keys', async () => {
    await owner.getByRole('switch', { name: 'Test mode' }).check();
    await owner.getByRole('heading', { name: 'API keys (test)' }).waitFor();
    expect(await owner.getByText('Test mode: you are viewing test keys').count()).toBe(1);
    expect(await owner.getByRole('cell', { name: 'browser key', exact: true }).count()).toBe(0);
    await owner.getByRole('button', { name: 'Create test key' }).click();
    const secret = (await owner.getByTestId('new-secret').textContent())!.trim();
    expect(secret).toMatch(/test/);
    await owner.getByRole('switch', { name: 'Test mode' }).uncheck();
    await owner.getByRole('heading', { name: 'API keys (live)' }).waitFor();
  });

  it('shows usage against the limit as a chart', async () => {
    await owner.getByRole('link', { name: 'Usage' }).click();
    await owner.getByRole('heading', { name: 'Usage (live)' }).waitFor();
    await owner.locator('.chart canvas').first().waitFor();
    await owner.getByText('Answers by status').waitFor();
    await shot(owner, 'usage');
  });

  it('lets an owner invite a viewer, who sees keys without controls and whom the API refuses', async () => {
    await owner.getByRole('link', { name: 'Users' }).click();
    await owner.getByLabel('Email').fill(VIEWER.email);
    await owner.getByLabel('Role').selectOption('viewer');
    await owner.getByRole('button', { name: 'Invite' }).click();
    const link = (await owner.getByTestId('invitation-link').textContent())!.trim();
    expect(link).toContain('/dashboard/#/invite/');
    await shot(owner, 'users');

    const viewer = await newVisitor({ width: 375, height: 800 });
    await viewer.goto(link);
    await viewer.getByLabel('Your name').fill(VIEWER.name);
    await viewer.getByLabel('Password').fill(VIEWER.password);
    await viewer.getByRole('button', { name: 'Create my user' }).click();
    await viewer.getByRole('heading', { name: 'API keys (live)' }).waitFor();
    // At phone width each key is a card whose cells carry their column's name.
    await viewer.getByText('browser key', { exact: true }).waitFor();
    expect(await viewer.getByText('Viewers can see keys but not create or revoke them.').count()).toBe(1);
    expect(await viewer.getByRole('button', { name: /Revoke|Create/ }).count()).toBe(0);
    await shot(viewer, 'api-keys-viewer-phone');

    // The interface hides the controls; the graph refuses the viewer all the same.
    const session = await fetch(`${platform.baseUrl}/dashboard/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: VIEWER.email, password: VIEWER.password }),
    });
    expect(session.status).toBe(200);
    const { csrfToken } = (await session.json()) as { csrfToken: string };
    const cookie = session.headers.getSetCookie().map((line) => line.split(';')[0]).join('; ');
    const liveKeyId = (await platform.identity().listKeys({ account: 'acme', kind: 'live' }))[0]!.id;
    const refused = await fetch(`${platform.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrfToken },
      body: JSON.stringify({ query: 'mutation($id: ID!) { revokeApiKey(id: $id) { id } }', variables: { id: liveKeyId } }),
    });
    const body = (await refused.json()) as { errors?: { extensions?: { code?: string; reason?: string } }[] };
    expect(body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    // Signed out everywhere from elsewhere: the open page goes back to sign-in at its next request.
    const ended = await fetch(`${platform.baseUrl}/dashboard/api/session/revoke-all`, { method: 'POST', headers: { cookie, 'x-csrf-token': csrfToken } });
    expect(ended.status).toBe(204);
    await viewer.getByRole('link', { name: 'Usage' }).click();
    await viewer.getByRole('heading', { name: 'Sign in' }).waitFor();
  });

  it('issues a traceroute key from the admin area and shows the observatory charts and map', async () => {
    await owner.getByRole('link', { name: 'Traceroute admin' }).click();
    await owner.getByRole('heading', { name: 'Traceroute admin' }).waitFor();
    await owner.getByLabel('Account').fill('lab-42');
    await owner.getByLabel('Key name').fill('browser probe key');
    await owner.getByLabel('Requests per hour').fill('50');
    await owner.getByLabel('Requests per day').fill('500');
    await owner.getByRole('button', { name: 'Issue key' }).click();
    const secret = (await owner.getByTestId('traceroute-secret').textContent())!.trim();
    await owner.getByRole('cell', { name: 'lab-42' }).waitFor();
    // Its use against its windows, read from the edge's counters.
    await owner.getByRole('cell', { name: '0 of 50 / 0 of 500' }).waitFor();
    const traces = await platform.request('/v1/public/traces', { headers: { 'x-api-key': secret } });
    expect(traces.status).toBe(200);

    owner.once('dialog', (dialog) => void dialog.accept());
    await owner.getByRole('button', { name: 'Disable browser probe key' }).click();
    await owner.getByRole('button', { name: 'Enable browser probe key' }).waitFor();
    // The list read again after the change shows the request made with the key.
    await owner.getByRole('cell', { name: '1 of 50 / 1 of 500' }).waitFor({ timeout: 15_000 });
    await owner.locator('.map svg path').first().waitFor();
    await shot(owner, 'traceroute-admin');
  });

  it('updates a provider status live, without a reload', async () => {
    // The change must come after the page's subscribe message, or there is nothing to see live.
    const subscribed = new Promise<void>((resolve) =>
      owner.on('websocket', (ws) => ws.on('framesent', (frame) => String(frame.payload).includes('"subscribe"') && resolve())),
    );
    await owner.getByRole('link', { name: 'Inference' }).click();
    const status = owner.getByTestId('provider-status-provider_b');
    await expect.poll(() => status.textContent(), { timeout: 15_000 }).toBe('operational');
    await subscribed;
    // The subscribe frame has left the browser, but the edge plans the subscription before it
    // listens: the change is made again (each call publishes one) until the page shows it.
    await expect
      .poll(
        async () => {
          const changed = await platform.request('/graphql', {
            method: 'POST',
            key: adminKey,
            json: { query: 'mutation { setProviderStatus(id: "provider_b", status: DOWN) { id status } }' },
          });
          expect(changed.status).toBe(200);
          return status.textContent();
        },
        { timeout: 15_000, interval: 250 },
      )
      .toBe('down');
    await shot(owner, 'inference');
  });

  it('renders each REST mount’s OpenAPI document with Swagger UI and GraphiQL from the platform', async () => {
    await owner.getByRole('link', { name: 'API reference' }).click();
    const frame = owner.frameLocator('iframe.reference');
    await frame.getByText('Membership Management Platform API').first().waitFor({ timeout: 30_000 });
    await owner.getByRole('button', { name: 'Traceroute public API' }).click();
    await frame.getByText('Traceroute Public API').first().waitFor({ timeout: 30_000 });
    await shot(owner, 'api-reference');

    await owner.getByRole('navigation').getByRole('link', { name: 'GraphQL explorer' }).click();
    await owner.locator('.graphiql-container').waitFor({ timeout: 30_000 });
    // A click before the editor has settled can be lost: execute again until the answer shows (a read, safe to repeat).
    await expect
      .poll(
        async () => {
          await owner.getByRole('button', { name: /Execute query/i }).click();
          return owner.locator('.graphiql-response').getByText('apiKeys').count();
        },
        { timeout: 40_000, interval: 3_000 },
      )
      .toBeGreaterThan(0);
    await shot(owner, 'graphql-explorer');
  });

  it('limits failed sign-ins and says how long to wait', async () => {
    const visitor = await newVisitor();
    await visitor.goto(`${platform.baseUrl}/dashboard/`);
    let message = '';
    for (let attempt = 0; attempt < 8 && !message.includes('Too many'); attempt++) {
      await visitor.getByLabel('Email').fill(VIEWER.email);
      await visitor.getByLabel('Password').fill(`wrong password ${attempt}`);
      await visitor.getByRole('button', { name: 'Sign in' }).click();
      const alert = visitor.getByRole('alert');
      await alert.waitFor();
      message = (await alert.textContent()) ?? '';
      if (!message.includes('Too many')) expect(message).toBe('The email or the password is wrong.');
    }
    expect(message).toMatch(/Too many sign-in attempts\. Try again in \d+ (seconds|minutes)\./);
    await shot(visitor, 'sign-in-limited');
  });

  it('signs out everywhere', async () => {
    await owner.getByRole('button', { name: 'Sign out everywhere' }).click();
    await owner.getByRole('heading', { name: 'Sign in' }).waitFor();
    await owner.reload();
    await owner.getByRole('heading', { name: 'Sign in' }).waitFor();
  });

  it('signs out of this browser', async () => {
    await signIn(owner, OWNER.email, OWNER.password);
    await owner.getByRole('heading', { name: 'API keys (live)' }).waitFor();
    await owner.getByRole('button', { name: 'Sign out', exact: true }).click();
    await owner.getByRole('heading', { name: 'Sign in' }).waitFor();
    await owner.reload();
    await owner.getByRole('heading', { name: 'Sign in' }).waitFor();
  });

  it('loaded nothing from another origin and broke no CSP rule', () => {
    expect(foreignRequests).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});

async function page_signInPage(page: Page): Promise<void> {
  await page.goto(`${platform.baseUrl}/dashboard/`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await shot(page, 'sign-in');
}
