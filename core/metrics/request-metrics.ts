import type { NextFunction, Request, Response } from 'express';
import { httpDuration, httpRequests } from './platform-metrics.js';

const MAX_TEMPLATES = 10_000;
/** An API version in a base (`/api/v1`) is part of the route, not an id. */
const VERSION = /^v\d{1,2}$/;

/**
 * Counts each answered request by interface, route template and status, and times it. The
 * template is Express's matched route where there is one, else the path with its id-like
 * segments (a digit, other than a version such as v1, or longer
 * than 24) as `:id`; a 404 is `(unmatched)`, so that scanners'
 * paths add no series.
 */
export function requestMetrics(service: string, interfaceOf: (path: string) => string) {
  const templates = new Map<string, string>();
  const templateOf = (path: string): string => {
    let template = templates.get(path);
    if (template === undefined) {
      template = path
        .split('/')
        .map((segment) => ((/\d/.test(segment) && !VERSION.test(segment)) || segment.length > 24 ? ':id' : segment))
        .join('/')
        .slice(0, 200);
      if (templates.size >= MAX_TEMPLATES) templates.clear();
      templates.set(path, template);
    }
    return template;
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    const path = req.path;
    res.once('finish', () => {
      const status = res.statusCode;
      const route = status === 404 ? '(unmatched)' : req.route?.path && typeof req.route.path === 'string' ? req.baseUrl + req.route.path : templateOf(path);
      const face = interfaceOf(path);
      httpRequests.inc({ service, interface: face, route, status: String(status) });
      httpDuration.observe({ service, interface: face, route }, (performance.now() - started) / 1000);
    });
    next();
  };
}
