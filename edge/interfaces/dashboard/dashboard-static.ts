import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { RestBases } from '../../edge-settings.js';
import { DASHBOARD_DIST } from '../../../dashboard/build.js';

export interface DashboardStaticOptions {
  /** Where the app is served (DASHBOARD_PATH), e.g. /dashboard. */
  basePath: string;
  restBases: RestBases;
  /** The built app; dashboard/dist by default. */
  distDir?: string;
}

/**
 * Everything the dashboard loads comes from this origin: scripts, styles, fonts, workers and
 * connections alike. Styles allow inline because Monaco, uPlot and Swagger UI write style elements
 * and attributes at run time; scripts never do.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "frame-src 'self'",
  "frame-ancestors 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
].join('; ');

// Swagger UI is served from its npm package as it is, not bundled: only the files its page loads.
const SWAGGER_FILES = new Set(['swagger-ui-bundle.js', 'swagger-ui.css', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png', 'favicon-16x16.png']);
const swaggerDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/**
 * Serves the built dashboard under `basePath`: hashed assets cached for a year, index.html never
 * cached (it names the current assets), a strict CSP, the app's settings at config.json and Swagger
 * UI's files under swagger-ui/. The dashboard's API (`basePath`/api) is left to the next handler.
 */
export function dashboardStatic(options: DashboardStaticOptions): express.RequestHandler {
  const base = options.basePath.replace(/\/+$/, '');
  const dist = options.distDir ?? DASHBOARD_DIST;
  const settings = {
    graphqlPath: '/graphql',
    restBases: options.restBases,
    // The REST mounts that publish an OpenAPI document (the inference mounts follow OpenAI's and publish none).
    openApi: [
      { title: 'Membership API', url: `${options.restBases.membership}/openapi.json` },
      { title: 'Traceroute public API', url: `${options.restBases.traceroute}/openapi.json` },
    ],
  };
  const files = express.static(dist, {
    index: false,
    redirect: false,
    fallthrough: true,
    setHeaders: (res, file) => {
      const hashed = file.startsWith(path.join(dist, 'assets') + path.sep);
      res.setHeader('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  const swagger = express.static(swaggerDir, { index: false, redirect: false, maxAge: '1d' });

  const sendIndex = (res: Response) => {
    const index = path.join(dist, 'index.html');
    if (!existsSync(index)) {
      res.status(503).type('text/plain').send('The dashboard is not built: run `npm run build:dashboard` (npm start builds it).');
      return;
    }
    res.setHeader('cache-control', 'no-cache');
    res.sendFile(index);
  };

  return (req: Request, res: Response, next: NextFunction) => {
    const asked = req.path;
    if (asked !== base && !asked.startsWith(`${base}/`)) return next();
    const rest = asked.slice(base.length);
    if (rest === '/api' || rest.startsWith('/api/')) return next();
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      res.status(405).json({ error: { code: 'method_not_allowed', message: `${req.method} is not allowed on ${asked}; use GET` } });
      return;
    }
    res.setHeader('content-security-policy', DASHBOARD_CSP);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'same-origin');
    // The app's URLs are relative to its folder, so the folder needs its slash.
    if (rest === '') return res.redirect(301, `${base}/${req.url.slice(asked.length)}`);
    if (rest === '/' || rest === '/index.html') return sendIndex(res);
    if (rest === '/config.json') {
      res.setHeader('cache-control', 'no-cache');
      return void res.json(settings);
    }
    if (rest.startsWith('/swagger-ui/')) {
      const name = rest.slice('/swagger-ui/'.length);
      if (!SWAGGER_FILES.has(name)) return notFound(res, asked);
      req.url = `/${name}`;
      return swagger(req, res, () => notFound(res, asked));
    }
    req.url = rest;
    files(req, res, () => {
      // Hash routing keeps app routes at index.html; a path with an extension is a missing file.
      if (path.extname(rest)) return notFound(res, asked);
      sendIndex(res);
    });
  };
}

function notFound(res: Response, path: string): void {
  res.status(404).json({ error: { code: 'not_found', message: `Nothing is served at ${path}` } });
}
