import type { BridgeRoutes } from './bridge-routes.js';

/**
 * The traceroute public API's paths (../shared/specs/traceroute-public-api.md) below /v1/public.
 * The search filters, export and stats arrive with the traceroute issue; the key rules hold now.
 */
export const tracerouteRoutes: BridgeRoutes = {
  'Query.traces': { method: 'GET', path: '/traces' },
  'Query.trace': { method: 'GET', path: '/traces/:id', resource: 'trace' },
};

export const tracerouteExpanded = ['TracePage.data'];
