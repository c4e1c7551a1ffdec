/**
 * The dashboard's first page, time to interactive from a warm server, in Debian's Chromium:
 * navigation start until the sign-in form accepts input (the email field focused and enabled),
 * and for a signed-in user until the API keys table shows the account's keys. Each run is a
 * fresh browser context (empty cache); the warm-cache figure reuses one context.
 *
 *   npx tsx bench/dashboard.ts            (RUNS=20 by default; CHROMIUM_PATH=/usr/bin/chromium)
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import { ensureDashboardBuilt } from '../dashboard/build.js';
import { AccountUserService } from '../identity/account-user.service.js';
import { ocrOnlyInferenceConfig } from '../test/support/inference-config.js';
import { percentile, startBenchPlatform } from './bench-platform.js';

const RUNS = Number(process.env.RUNS ?? 20);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const OWNER = { email: 'bench-owner@example.com', password: 'bench owner password' };

/** Milliseconds from the page's navigation start to the moment `ready` resolved, by the page's own clock. */
async function timeToInteractive(page: Page, url: string, ready: (page: Page) => Promise<void>): Promise<number> {
  await page.goto(url, { waitUntil: 'commit' });
  await ready(page);
  return page.evaluate(() => performance.now());
}

const signInReady = async (page: Page) => {
  await page.locator('#email:focus:enabled').waitFor();
};
const keysReady = async (page: Page) => {
  await page.getByRole('cell', { name: 'bench key', exact: true }).waitFor();
};

async function series(browser: Browser, url: string, ready: (page: Page) => Promise<void>, cookie?: { name: string; value: string }) {
  const cold: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const context = await browser.newContext();
    if (cookie) await context.addCookies([{ ...cookie, domain: new URL(url).hostname, path: '/', httpOnly: true, sameSite: 'Strict' }]);
    cold.push(await timeToInteractive(await context.newPage(), url, ready));
    await context.close();
  }
  const context = await browser.newContext();
  if (cookie) await context.addCookies([{ ...cookie, domain: new URL(url).hostname, path: '/', httpOnly: true, sameSite: 'Strict' }]);
  const page = await context.newPage();
  await timeToInteractive(page, url, ready);
  const warm: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    // A hash-only change would be a same-document navigation with no new clock; leave the page first.
    await page.goto('about:blank');
    warm.push(await timeToInteractive(page, url, ready));
  }
  await context.close();
  return { cold: cold.sort((a, b) => a - b), warm: warm.sort((a, b) => a - b) };
}

const line = (label: string, sorted: number[]) =>
  console.log(`${label.padEnd(44)} p50 ${percentile(sorted, 50).toFixed(0).padStart(5)} ms   p95 ${percentile(sorted, 95).toFixed(0).padStart(5)} ms   max ${sorted[sorted.length - 1]!.toFixed(0).padStart(5)} ms`);

async function main(): Promise<void> {
  await ensureDashboardBuilt({ info: (message) => console.log(message) });
  const bench = await startBenchPlatform('dashboard', { inference: ocrOnlyInferenceConfig() });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  try {
    await new AccountUserService(bench.identityOrm.em.fork()).createOwner({ account: 'bench', email: OWNER.email, password: OWNER.password });
    const base = bench.platform.baseUrl;
    const signIn = await fetch(`${base}/dashboard/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(OWNER) });
    if (!signIn.ok) throw new Error(`sign-in answered ${signIn.status}`);
    const { csrfToken } = (await signIn.json()) as { csrfToken: string };
    const value = /dash_session=([^;]+)/.exec(signIn.headers.get('set-cookie') ?? '')?.[1];
    if (!value) throw new Error('sign-in set no dash_session cookie');
    const created = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: `dash_session=${value}`, 'x-csrf-token': csrfToken },
      body: JSON.stringify({ query: 'mutation { createApiKey(kind: LIVE, name: "bench key") { id } }' }),
    });
    if (!created.ok) throw new Error(`createApiKey answered ${created.status}`);

    const url = `${base}/dashboard/`;
    // Warm the server: the first requests compile the gateway's plans and fill the OS cache.
    await series(browser, url, signInReady).catch(() => undefined);
    console.log(`Dashboard time to interactive, ${RUNS} runs each, server warm (${process.arch}, ${CHROMIUM})`);
    const anonymous = await series(browser, url, signInReady);
    line('sign-in page, empty browser cache', anonymous.cold);
    line('sign-in page, browser cache warm', anonymous.warm);
    const keys = await series(browser, `${url}#/settings/api-keys`, keysReady, { name: 'dash_session', value });
    line('API keys page (signed in), empty cache', keys.cold);
    line('API keys page (signed in), cache warm', keys.warm);
  } finally {
    await browser.close();
    await bench.stop();
  }
}

await main();
