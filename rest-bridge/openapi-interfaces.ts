import type { OpenApiDocument, OpenApiExtras, SchemaObject } from './openapi.js';

/** The membership API's error body (rest-bridge/errors.ts, membershipErrorFormat). */
const MEMBERSHIP_ERROR: SchemaObject = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['type', 'code', 'message', 'param', 'request_id'],
      properties: {
        type: { type: 'string', description: 'invalid_request_error, authentication_error, permission_error, rate_limit_error or api_error.' },
        code: { type: 'string', description: 'What went wrong, e.g. member_not_found, missing_api_key, rate_limit_exceeded.' },
        message: { type: 'string' },
        param: { type: 'string', nullable: true, description: 'The parameter at fault, if one is.' },
        existing_id: { type: 'string', description: 'On a conflict with an existing record (application_exists): its id.' },
        request_id: { type: 'string', description: 'Quote it when reporting a problem: it finds the request in the log.' },
      },
    },
  },
};

/** The traceroute API's error body (rest-bridge/errors.ts, tracerouteErrorFormat). */
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

/** `/finance/reports?format=csv` is answered by its own handler (rest-bridge/finance-report-csv.ts). */
function financeReportCsv(document: OpenApiDocument): void {
  const operation = document.paths['/finance/reports']?.get;
  if (!operation) return;
  operation.parameters = [
    ...(operation.parameters ?? []),
    {
      name: 'format',
      in: 'query',
      required: false,
      schema: { type: 'string', enum: ['json', 'csv'], default: 'json' },
      description: 'csv: the same report as text/csv.',
    },
  ];
  operation.responses['200'].content!['text/csv'] = { schema: { type: 'string' } };
}

/**
 * `/traces/export` is streamed by its own handler (subgraphs/traceroute/export), not by sofa: its
 * rows are the trace's fields as a single trace shows them, hops only with include_hops.
 */
/** The export's bounds, which the traceroute subgraph owns: the edge gets them from the platform's configuration. */
export interface TraceExportLimits {
  maxHours: number;
  defaultHours: number;
  defaultLimit: number;
  maxLimit: number;
}

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

/**
 * The document paths served by rest-bridge/document-upload.ts, not by sofa: the upload (multipart
 * or JSON), the PUT of a GraphQL upload ticket, the download, and the 202 of extract and classify.
 */
function documentPaths(document: OpenApiDocument): void {
  const error = { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
  const documentSchema = document.components.schemas.Document ? { $ref: '#/components/schemas/Document' } : { type: 'object' };
  const details = {
    title: { type: 'string' },
    category: { type: 'string' },
    memberId: { type: 'string' },
  };
  const staged = {
    type: 'object',
    required: ['uploadId', 'sizeBytes', 'sha256', 'mimeType'],
    properties: { uploadId: { type: 'string' }, sizeBytes: { type: 'integer' }, sha256: { type: 'string' }, mimeType: { type: 'string' } },
  };
  document.paths['/documents/upload'] = {
    post: {
      operationId: 'documents_upload',
      summary: 'Uploads a document (type sniffed from the bytes); processing starts after the answer.',
      requestBody: {
        required: true,
        content: {
          'multipart/form-data': {
            schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' }, ...details, tags: { type: 'string', description: 'Comma-separated, or the field repeated.' } } },
          },
          'application/json': {
            schema: {
              type: 'object',
              required: ['filename', 'content'],
              properties: { filename: { type: 'string' }, contentType: { type: 'string', description: 'Ignored: the type comes from the bytes.' }, content: { type: 'string', format: 'byte' }, ...details, tags: { type: 'array', items: { type: 'string' } } },
            },
          },
        },
      },
      responses: { '201': { description: 'The document, PENDING.', content: { 'application/json': { schema: documentSchema } } }, default: error },
    },
  };
  document.paths['/documents/uploads/{id}'] = {
    put: {
      operationId: 'documents_upload_ticket',
      summary: 'The bytes of a createDocumentUpload ticket; then call createDocument(uploadId).',
      parameters: [idParameter],
      requestBody: { required: true, content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
      responses: { '200': { description: 'The staged upload.', content: { 'application/json': { schema: staged } } }, default: error },
    },
  };
  document.paths['/documents/{id}/download'] = {
    get: {
      operationId: 'documents_download',
      summary: 'The document’s bytes, with their sniffed type and a Content-Disposition naming the file.',
      parameters: [idParameter],
      responses: { '200': { description: 'The bytes.', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } }, default: error },
    },
  };
  const pending = {
    description: 'Not processed yet: the status (PENDING or PROCESSING); ask again after Retry-After.',
    content: { 'application/json': { schema: { type: 'object', required: ['id', 'status'], properties: { id: { type: 'string' }, status: { type: 'string' } } } } },
  };
  for (const path of ['/documents/{id}/extract', '/documents/{id}/classify']) {
    const operation = document.paths[path]?.get;
    if (operation) operation.responses['202'] = pending;
  }
}

/** The membership API at /api/v1: Bearer keys (live or test), Stripe-like errors. */
export const membershipOpenApi: OpenApiExtras = {
  securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A live or test API key.' } },
  areas: [
    { name: 'Members', description: 'Members, their lifecycle and renewals, and member categories.', prefixes: ['/members', '/member-categories'] },
    { name: 'Finance', description: 'Invoices, payments, refunds, reports and the audit trail.', prefixes: ['/invoices', '/payments', '/refunds', '/finance', '/audit-events'] },
    { name: 'Events', description: 'Events, registration, the waitlist and check-in.', prefixes: ['/events'] },
    { name: 'Chat', description: 'Channels, direct and channel messages, and webhook endpoints.', prefixes: ['/chat'] },
    { name: 'Jobs', description: 'Job postings, applications and matching.', prefixes: ['/jobs', '/job-applications'] },
    { name: 'Tenders', description: 'Tenders, vendors, sealed bids, receipts and awards.', prefixes: ['/tenders', '/bids', '/bid-receipts', '/vendors'] },
    { name: 'Documents', description: 'Documents: upload, search, extraction, classification and categories.', prefixes: ['/documents'] },
  ],
  errorSchema: MEMBERSHIP_ERROR,
  extend: (document) => {
    financeReportCsv(document);
    documentPaths(document);
  },
};

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
