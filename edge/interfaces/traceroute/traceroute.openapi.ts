import type { OpenApiDocument, OpenApiExtras, SchemaObject } from '../../rest/openapi.js';
import type { TraceExportLimits } from '../../edge-settings.js';

/** The traceroute API's error body (traceroute.error-body.ts). */
const TRACEROUTE_ERROR: SchemaObject = {
  type: 'object',
  required: ['error', 'message', 'request_id'],
  properties: {
    error: { type: 'string', description: 'api_key_required, invalid_key, key_disabled, key_expired, not_found, rate_limit_hourly, rate_limit_daily, invalid_parameter, …' },
    message: { type: 'string' },
    param: { type: 'string', description: 'The parameter at fault, if one is.' },
    request_id: { type: 'string' },
  },
};

/**
 * `/traces/export` is streamed by its own handler (subgraphs/traceroute/export), not by sofa: its
 * rows are the trace's fields as a single trace shows them, hops only with include_hops.
 */

function traceExport(document: OpenApiDocument, { maxHours: MAX_HOURS, defaultHours: DEFAULT_EXPORT_HOURS, defaultLimit: DEFAULT_EXPORT_LIMIT, maxLimit: MAX_EXPORT_LIMIT }: TraceExportLimits): void {
  const trace = document.components.schemas.Trace as { properties?: Record<string, SchemaObject>; required?: string[] } | undefined;
  if (!trace?.properties) return;
  document.components.schemas.ExportedTrace = {
    type: 'object',
    required: (trace.required ?? []).filter((name) => name !== 'hops'),
    properties: trace.properties,
    description: 'A trace as exported; hops only with include_hops (the default).',
  };
  const query = (name: string, schema: SchemaObject, description: string) => ({ name, in: 'query', required: false, schema, description });
  const search = document.paths['/traces']?.get?.parameters ?? [];
  // Every search parameter but the page's own; `cursor` continues an export as it continues a search.
  const filters = search.filter((p) => !['page', 'limit', 'include_hops', 'hours'].includes(String(p.name)));
  document.paths['/traces/export'] = {
    get: {
      operationId: 'traces_export',
      summary: 'Bulk export of the filtered traces, newest first, as JSON or CSV.',
      parameters: [
        query('format', { type: 'string', enum: ['json', 'csv'], default: 'json' }, 'json (default) or csv.'),
        ...filters,
        query('hours', { type: 'integer', minimum: 1, maximum: MAX_HOURS, default: DEFAULT_EXPORT_HOURS }, `The last N hours; default ${DEFAULT_EXPORT_HOURS}.`),
        query(
          'limit',
          { type: 'integer', minimum: 1, maximum: MAX_EXPORT_LIMIT, default: DEFAULT_EXPORT_LIMIT },
          `Maximum traces; default ${DEFAULT_EXPORT_LIMIT}, maximum ${MAX_EXPORT_LIMIT}.`,
        ),
        query('include_hops', { type: 'boolean', default: true }, 'Include hop details; default true.'),
      ],
      responses: {
        '200': {
          description: 'The traces, streamed. A CSV answer names the next page\'s cursor in the X-Next-Cursor header (absent on the last page).',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['data', 'hasMore', 'nextCursor'],
                properties: {
                  data: { type: 'array', items: { $ref: '#/components/schemas/ExportedTrace' } },
                  hasMore: { type: 'boolean' },
                  nextCursor: { type: 'string', nullable: true, description: 'Pass as cursor for the next page; null on the last.' },
                },
              },
            },
            'text/csv': { schema: { type: 'string', description: 'One row per trace, with a header row; hops as JSON text in the last column with include_hops.' } },
          },
        },
        default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    },
  };
}

/** The traceroute public API at /v1/public: the key in X-API-Key or in ?api_key=. */
export const tracerouteOpenApi = (limits: TraceExportLimits): OpenApiExtras => ({
  securitySchemes: {
    apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
  },
  areas: [{ name: 'Traces', description: 'Traceroute measurements: search, one trace, export and statistics.', prefixes: ['/traces', '/stats'] }],
  errorSchema: TRACEROUTE_ERROR,
  extend: (document) => traceExport(document, limits),
});
