import type { BridgeRoutes } from '../../rest/bridge-routes.js';

/**
 * The traceroute public API's paths (docs/specs/traceroute-public-api.md) below /v1/public.
 * Query parameters are the GraphQL arguments and the bodies the GraphQL types, under the spec's
 * snake_case names (tracerouteRestName). GET /traces/export is a streaming handler of its own
 * (tracerouteStreamRoutes), mounted by the edge before this bridge.
 */
export const tracerouteRoutes: BridgeRoutes = {
  'Query.traces': { method: 'GET', path: '/traces' },
  'Query.trace': { method: 'GET', path: '/traces/:id', resource: 'trace' },
  // The record as imported, in an envelope: `record` is its JSON text byte for byte.
  'Query.traceRecord': { method: 'GET', path: '/traces/:id/raw', resource: 'trace' },
  'Query.traceStats': { method: 'GET', path: '/stats' },
};

/** Objects REST clients see whole: a page's traces, and a trace's hops and anomaly components (REST names). */
export const tracerouteExpanded = [
  'TracePage.data',
  'Trace.hops',
  'Hop.responders',
  'Hop.stray_replies',
  'Trace.anomaly',
  'Trace.provenance',
  'TraceStats.by_direction',
  'TraceStats.by_status',
  'TraceStats.anomaly_distribution',
  'TraceStats.top_asns',
  'TraceStats.top_probe_cities',
  'TraceStats.top_target_cities',
  'TraceStats.per_hour',
];

/** The export, for the bridge's 404 and 405 (the relay serves it before the bridge). */
export const tracerouteHandwrittenRoutes = [{ method: 'GET', path: '/traces/export' }] as const;

/** Paths the edge serves by relaying a subgraph's stream (sofa cannot stream), by subgraph. */
export const tracerouteStreamRoutes = { export: { method: 'GET', path: '/traces/export', subgraph: 'traceroute' } } as const;

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/**
 * The graph is camelCase; this REST view keeps the names it was published with: every field and
 * parameter in snake_case (`traceId` is `trace_id`), except the platform's list envelope
 * (`hasMore`, `nextCursor`), which every REST list shares.
 */
export function tracerouteRestName(coordinate: string): string | undefined {
  const argument = /^\w+\.\w+\((\w+):\)$/.exec(coordinate);
  if (argument) return snakeCase(argument[1]);
  const [type, field] = coordinate.split('.');
  if (type === 'Query' || type === 'Mutation' || type === 'TracePage') return undefined;
  return snakeCase(field);
}
