import type { OpenApiDocument, OpenApiExtras, SchemaObject } from '../../rest/openapi.js';

/** The membership API's error body (membership.error-body.ts). */
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

/** `/finance/reports?format=csv` is answered by its own handler (finance-report-csv.ts). */
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
 * The document paths served by document-upload.ts, not by sofa: the upload (multipart
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
