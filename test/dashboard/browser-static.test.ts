import type { AddressInfo } from 'node:net';
import http from 'node:http';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDashboardBuilt } from '../../dashboard/build.js';
import { loadConfig } from '../../platform/config.js';
import { DASHBOARD_CSP, dashboardStatic } from '../../edge/interfaces/dashboard/dashboard-static.js';

// The dashboard's files under another DASHBOARD_PATH, without the platform: the app's URLs are
// relative, so one build serves any path.
let server: http.Server;
let base: string;

beforeAll(async () => {
  await ensureDashboardBuilt();
  const app = express();
  app.use(dashboardStatic({ basePath: '/console/admin', restBases: loadConfig({ NODE_ENV: 'test' }).restBases }));
  app.use((_req, res) => void res.status(418).send('next handler'));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 180_000);

afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('dashboardStatic under DASHBOARD_PATH=/console/admin', () => {
  it('serves index.html with relative asset URLs, the CSP and no-cache', async () => {
    const response = await fetch(`${base}/console/admin/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const html = await response.text();
    const asset = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeDefined();
    const script = await fetch(`${base}/console/admin/${asset}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('redirects the bare path to its folder, keeping the query', async () => {
    const response = await fetch(`${base}/console/admin?x=1`, { redirect: 'manual' });
    expect(response.status).toBe(301);
    expect(response.headers.get('location')).toBe('/console/admin/?x=1');
  });

  it('leaves the API and other paths to the next handler', async () => {
    expect((await fetch(`${base}/console/admin/api/session`)).status).toBe(418);
    expect((await fetch(`${base}/console`)).status).toBe(418);
    expect((await fetch(`${base}/dashboard/`)).status).toBe(418);
    expect((await fetch(`${base}/console/administrator`)).status).toBe(418);
  });

  it('answers 404 for a missing file and for files of swagger-ui-dist it does not serve', async () => {
    const missing = await fetch(`${base}/console/admin/assets/nothing.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('not_found');
    expect((await fetch(`${base}/console/admin/swagger-ui/index.html`)).status).toBe(404);
    expect((await fetch(`${base}/console/admin/swagger-ui/../package.json`)).status).not.toBe(200);
    expect((await fetch(`${base}/console/admin/swagger-ui/swagger-ui.css`)).status).toBe(200);
  });

  it('refuses writes with 405 and an Allow header', async () => {
    const response = await fetch(`${base}/console/admin/index.html`, { method: 'PUT' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
  });
});
