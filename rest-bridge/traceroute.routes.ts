import type { BridgeRoutes } from './bridge-routes.js';

/**
 * The traceroute public API's paths (../shared/specs/traceroute-public-api.md) below /v1/public.
 * Query parameters are the GraphQL arguments by name (the spec's snake_case), and the bodies are
 * the GraphQL types unchanged. GET /traces/export is a streaming handler of its own
 * (subgraphs/traceroute/export/trace-export.handler.ts), mounted by the edge before this bridge.
 */
export const tracerouteRoutes: BridgeRoutes = {
  'Query.traces': { method: 'GET', path: '/traces' },
  'Query.trace': { method: 'GET', path: '/traces/:id', resource: 'trace' },
  'Query.traceStats': { method: 'GET', path: '/stats' },
};

/** Objects REST clients see whole: a page's traces, and a trace's hops and anomaly components. */
export const tracerouteExpanded = [
  'TracePage.data',
  'Trace.hops',
  'Trace.anomaly',
  'TraceStats.by_direction',
  'TraceStats.by_status',
  'TraceStats.anomaly_distribution',
  'TraceStats.top_asns',
  'TraceStats.top_probe_cities',
  'TraceStats.top_target_cities',
  'TraceStats.per_hour',
];
