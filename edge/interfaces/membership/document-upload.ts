import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ApolloServer } from '@apollo/server';
import busboy from 'busboy';
import express, { type NextFunction, type Request, type Response } from 'express';
import { GraphQLError, type ExecutionResult, type GraphQLFormattedError } from 'graphql';
import { Agent, request } from 'undici';
import type { EdgeContext } from '../../../core/edge-context.js';
import { abortChunkedResponse, closedByClient, forwardTo } from '../../../core/http-stream.js';
import { PRINCIPAL_HEADER, signPrincipal } from '../../../core/principal.js';
import { DEFAULT_JSON_MAX_DEPTH, nestsDeeperThan, tooDeepMessage } from '../../../core/json-depth.js';
import { storedFilename } from '../../../core/document-filename.js';
import { apiErrorFromGraphQL, sendApiError, type ApiError } from '../../rest/api-error.js';
import { membershipErrorFormat } from './membership.error-body.js';

/** Room for a multipart form's boundaries, part headers and small fields around the file. */
const FORM_OVERHEAD_BYTES = 64 * 1024;
const FIELD_BYTES = 16 * 1024;
const BASE64_BODY = /^[A-Za-z0-9+/\r\n]*={0,2}\s*$/;

/** Every scalar field of a document: the upload answers what GET /documents/:id answers. */
const DOCUMENT_FIELDS =
  'id keyId memberId filename title mimeType sizeBytes sha256 tags status failureReason failureDetail attempts pageCount language extractionMethod extractionConfidence category categorySource createdAt processedAt deletedAt purgeAt snippet rank livemode';
const CREATE_DOCUMENT = `mutation CreateDocument($uploadId: ID!, $title: String, $category: String, $tags: [String!], $memberId: ID) {
  createDocument(uploadId: $uploadId, title: $title, category: $category, tags: $tags, memberId: $memberId) { ${DOCUMENT_FIELDS} }
}`;
const EXTRACTION = `query DocumentExtraction($id: ID!) {
  documentExtraction(id: $id) { id status failureReason pages { page text method confidence } text pageCount method confidence language keyFields { kind value normalized currency page start end } }
}`;
const CLASSIFICATION = `query DocumentClassification($id: ID!) {
  documentClassification(id: $id) { id status category source suggested confidence layer runnersUp { category confidence } categoriesVersion computedAt }
}`;

export interface DocumentRestOptions {
  /** The membership REST base, e.g. /api/v1. */
  basePath: string;
  apollo: ApolloServer<EdgeContext>;
  /** The membership subgraph's /graphql URL: its document routes answer beside it. */
  subgraphUrl: string;
  internalSecret: string;
  maxUploadBytes: number;
  /** How deeply a JSON upload's body may nest (JSON_MAX_DEPTH); default 64. */
  jsonMaxDepth?: number;
}

interface DocumentDetails {
  title?: string;
  category?: string;
  tags?: string[];
  memberId?: string;
}

class UploadRefused extends Error {
  constructor(readonly apiError: ApiError & { existing_id?: string }) {
    super(apiError.message);
  }
}

const tooLarge = (max: number): ApiError => ({ status: 413, code: 'document_too_large', message: `The file is larger than the ${max} bytes allowed`, param: 'file' });

/**
 * The name the document will be kept under (the subgraph applies the same rule where it stores
 * it); checked here too so that a refused name is answered before any byte is relayed.
 */
function keptFilename(given: string): string {
  try {
    return storedFilename(given);
  } catch (error) {
    if (error instanceof GraphQLError) throw new UploadRefused(apiErrorFromGraphQL([error.toJSON()]));
    throw error;
  }
}

/**
 * The document paths that are not a GraphQL field as they are, mounted on the membership base
 * after the edge guard and before the Idempotency-Key step and the bridge (a streamed body must
 * not be buffered to be fingerprinted; see README for what protects a retried upload):
 * - POST /documents/upload: multipart/form-data (field `file`, parsed as a stream with busboy) or
 *   JSON with base64 `content`; the bytes stream to the membership subgraph's staging route, then
 *   `createDocument` files them; 201 with the document.
 * - PUT /documents/uploads/:id: the bytes of a GraphQL createDocumentUpload ticket, streamed.
 * - GET /documents/:id/download: the bytes, streamed from the subgraph.
 * - GET /documents/:id/extract and /classify: 202 with the status until the document is ready.
 * Other requests pass to `next`.
 */
export function documentRest(options: DocumentRestOptions) {
  const origin = new URL(options.subgraphUrl).origin;
  const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 64 });
  const base = options.basePath.replace(/\/+$/, '');
  const max = options.maxUploadBytes;
  const maxDepth = options.jsonMaxDepth ?? DEFAULT_JSON_MAX_DEPTH;
  const jsonLimit = Math.ceil(max / 3) * 4 + FORM_OVERHEAD_BYTES;
  const parseJson = express.json({ limit: jsonLimit });
  const uploadTicket = new RegExp(`^${escapeRegExp(base)}/documents/uploads/([^/]+)/?$`);
  const byId = new RegExp(`^${escapeRegExp(base)}/documents/([^/]+)/(download|extract|classify)/?$`);

  const principalHeaders = (req: Request) => ({
    [PRINCIPAL_HEADER]: signPrincipal(req.principal!, options.internalSecret),
    'x-request-id': String(req.id),
  });

  /** Streams `body` into a staged upload on the subgraph; resolves with its id. */
  async function stage(req: Request, body: Readable, filename: string, ticket?: string, signal?: AbortSignal): Promise<{ uploadId: string; sizeBytes: number; sha256: string; mimeType: string }> {
    const upstream = await request(`${origin}/documents/uploads${ticket ? `/${encodeURIComponent(ticket)}` : ''}`, {
      method: ticket ? 'PUT' : 'POST',
      headers: { ...principalHeaders(req), 'content-type': 'application/octet-stream', 'x-document-filename': encodeURIComponent(filename) },
      body,
      signal,
      dispatcher,
    });
    const text = await upstream.body.text();
    const parsed = JSON.parse(text) as { uploadId: string; sizeBytes: number; sha256: string; mimeType: string; errors?: GraphQLFormattedError[] };
    if (upstream.statusCode >= 400) throw new UploadRefused(subgraphError(upstream.statusCode, parsed.errors ?? []));
    return parsed;
  }

  async function execute<T>(req: Request, query: string, variables: Record<string, unknown>): Promise<ExecutionResult<T>> {
    const response = await options.apollo.executeOperation({ query, variables }, { contextValue: { principal: req.principal!, requestId: String(req.id) } });
    if (response.body.kind !== 'single') throw new Error('Incremental delivery is not used for documents');
    return response.body.singleResult as ExecutionResult<T>;
  }

  async function file(req: Request, res: Response, uploadId: string, details: DocumentDetails): Promise<void> {
    const result = await execute<{ createDocument: Record<string, unknown> }>(req, CREATE_DOCUMENT, { uploadId, ...details });
    if (result.errors?.length || !result.data) {
      const error = apiErrorFromGraphQL(result.errors ?? []);
      const existingId = result.errors?.find((e) => e.extensions?.reason === 'document_duplicate')?.extensions?.existingId;
      return sendRefusal(req, res, typeof existingId === 'string' ? { ...error, existing_id: existingId } : error);
    }
    res.status(201).json(result.data.createDocument);
  }

  async function uploadMultipart(req: Request, res: Response): Promise<void> {
    const details: DocumentDetails = {};
    const tags: string[] = [];
    const controller = new AbortController();
    let staged: Promise<Awaited<ReturnType<typeof stage>>> | undefined;
    let overflow = false;
    let refused: unknown;
    await new Promise<void>((resolve, reject) => {
      let form: busboy.Busboy;
      try {
        form = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { files: 1, fileSize: max, fields: 20, fieldSize: FIELD_BYTES, parts: 22 } });
      } catch {
        return reject(new UploadRefused({ status: 400, code: 'invalid_upload', message: 'The multipart body has no boundary', param: null }));
      }
      form.on('field', (name, value) => {
        if (name === 'title' || name === 'category' || name === 'memberId') details[name] = value;
        else if (name === 'tags' || name === 'tags[]') tags.push(...value.split(',').map((tag) => tag.trim()).filter(Boolean));
      });
      form.on('file', (name, stream, info) => {
        if (name !== 'file' || staged || refused) return void stream.resume();
        // busboy has cut the name to its last segment already; the rest of the rule is checked before staging.
        let filename: string;
        try {
          filename = keptFilename(info.filename || 'upload');
        } catch (error) {
          refused = error;
          req.unpipe(form);
          stream.resume();
          return resolve();
        }
        stream.on('limit', () => {
          // Past the cap: stop reading, drop the staged write, answer 413.
          overflow = true;
          controller.abort();
          req.unpipe(form);
          resolve();
        });
        staged = stage(req, stream, filename, undefined, controller.signal);
        // Refused early (415 after sniffing): nothing reads the rest of the form any more.
        staged.catch(() => {
          req.unpipe(form);
          stream.resume();
          resolve();
        });
      });
      form.on('close', () => resolve());
      form.on('error', (error) => reject(new UploadRefused({ status: 400, code: 'invalid_upload', message: `The multipart body is malformed: ${(error as Error).message}`, param: null })));
      req.pipe(form);
    });
    if (refused) throw refused;
    if (overflow) throw new UploadRefused(tooLarge(max));
    if (!staged) throw new UploadRefused({ status: 400, code: 'missing_file', message: 'The form has no `file` part', param: 'file' });
    const upload = await staged;
    if (tags.length) details.tags = tags;
    await file(req, res, upload.uploadId, details);
  }

  async function uploadJson(req: Request, res: Response): Promise<void> {
    await new Promise<void>((resolve, reject) =>
      parseJson(req, res, (error?: unknown) => {
        const status = (error as { status?: number } | undefined)?.status;
        if (status === 413) reject(new UploadRefused(tooLarge(max)));
        else if (error) reject(new UploadRefused({ status: 400, code: 'invalid_json', message: 'The body is not valid JSON', param: null }));
        else resolve();
      }),
    );
    // JSON_MAX_DEPTH, as on every interface; nothing below walks the body, but nothing takes it deeper either.
    if (nestsDeeperThan(req.body, maxDepth)) throw new UploadRefused({ status: 400, code: 'invalid_body', message: tooDeepMessage(maxDepth), param: null });
    const body = (req.body ?? {}) as Record<string, unknown>;
    const { content } = body;
    if (typeof body.filename !== 'string' || !body.filename.trim()) {
      throw new UploadRefused({ status: 400, code: 'invalid_parameter', message: 'filename is required: the file name, at most 255 characters', param: 'filename' });
    }
    const filename = keptFilename(body.filename);
    if (typeof content !== 'string' || !content.length || !BASE64_BODY.test(content)) {
      throw new UploadRefused({ status: 400, code: 'invalid_document_content', message: 'content must be the file in base64', param: 'content' });
    }
    // The base64 text and one decoded copy; the text is let go before the bytes travel on.
    let bytes: Buffer | null = Buffer.from(content, 'base64');
    req.body = undefined;
    if (bytes.length > max) throw new UploadRefused(tooLarge(max));
    const stream = Readable.from([bytes]);
    bytes = null;
    const upload = await stage(req, stream, filename);
    const details: DocumentDetails = {};
    for (const name of ['title', 'category', 'memberId'] as const) if (typeof body[name] === 'string') details[name] = body[name];
    if (Array.isArray(body.tags)) details.tags = body.tags.filter((tag): tag is string => typeof tag === 'string');
    else if (typeof body.tags === 'string') details.tags = body.tags.split(',').map((tag) => tag.trim()).filter(Boolean);
    await file(req, res, upload.uploadId, details);
  }

  function sendRefusal(req: Request, res: Response, error: ApiError & { existing_id?: string }): void {
    const body = membershipErrorFormat(error, String(req.id)) as { error: Record<string, unknown> };
    if (error.existing_id) body.error.existing_id = error.existing_id;
    // A body left unread (a refusal before the end of it) is not worth reading: the connection goes with it.
    if (error.status === 413 || !req.complete) res.setHeader('connection', 'close');
    res.status(error.status).json(body);
  }

  async function upload(req: Request, res: Response): Promise<void> {
    const declared = Number(req.headers['content-length']);
    const type = (req.headers['content-type'] ?? '').toLowerCase();
    const multipart = type.startsWith('multipart/form-data');
    if (!multipart && !type.startsWith('application/json')) {
      throw new UploadRefused({ status: 415, code: 'unsupported_upload_encoding', message: 'Send the file as multipart/form-data (field `file`) or as JSON with base64 `content`', param: null });
    }
    // Refused before a byte of the body is read.
    if (Number.isFinite(declared) && declared > (multipart ? max + FORM_OVERHEAD_BYTES : jsonLimit)) throw new UploadRefused(tooLarge(max));
    await (multipart ? uploadMultipart(req, res) : uploadJson(req, res));
  }

  async function putTicket(req: Request, res: Response, ticket: string): Promise<void> {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) throw new UploadRefused(tooLarge(max));
    const staged = await stage(req, req, String(req.headers['x-document-filename'] ?? ''), decodeURIComponent(ticket));
    res.status(200).json(staged);
  }

  async function download(req: Request, res: Response, id: string): Promise<void> {
    const controller = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    const upstream = await request(`${origin}/documents/${encodeURIComponent(id)}/content`, { method: 'GET', headers: principalHeaders(req), signal: controller.signal, dispatcher });
    if (upstream.statusCode >= 400) {
      const parsed = (await upstream.body.json()) as { errors?: GraphQLFormattedError[] };
      throw new UploadRefused(subgraphError(upstream.statusCode, parsed.errors ?? []));
    }
    res.status(upstream.statusCode);
    for (const name of ['content-type', 'content-length', 'content-disposition', 'x-content-type-options', 'content-security-policy', 'etag']) {
      const value = upstream.headers[name];
      if (value !== undefined) res.setHeader(name, value);
    }
    await pipeline(upstream.body, forwardTo(res));
    res.end();
  }

  /** Extract and classify: 202 with the status while there is nothing to show, 422 when processing failed. */
  async function processed(req: Request, res: Response, id: string, what: 'extract' | 'classify'): Promise<void> {
    const field = what === 'extract' ? 'documentExtraction' : 'documentClassification';
    const result = await execute<Record<string, { status: string; failureReason?: string | null } & Record<string, unknown>>>(req, what === 'extract' ? EXTRACTION : CLASSIFICATION, { id });
    if (result.errors?.length || !result.data) return sendRefusal(req, res, apiErrorFromGraphQL(result.errors ?? []));
    const answer = result.data[field];
    if (answer.status === 'PENDING' || answer.status === 'PROCESSING') {
      res.setHeader('retry-after', '2');
      return void res.status(202).json({ id: answer.id, status: answer.status });
    }
    if (answer.status === 'FAILED' && what === 'extract') {
      return sendRefusal(req, res, {
        status: 422,
        code: 'document_processing_failed',
        message: `Processing failed: ${answer.failureReason ?? 'error'}`,
        param: null,
      });
    }
    res.status(200).json(answer);
  }

  return (req: Request, res: Response, next: NextFunction): void => {
    const path = req.path;
    let work: Promise<void> | undefined;
    if (req.method === 'POST' && path.replace(/\/+$/, '') === `${base}/documents/upload`) work = upload(req, res);
    else if (req.method === 'PUT' && uploadTicket.test(path)) work = putTicket(req, res, uploadTicket.exec(path)![1]);
    else if (req.method === 'GET' && byId.test(path)) {
      const [, id, action] = byId.exec(path)!;
      work = action === 'download' ? download(req, res, decodeURIComponent(id)) : processed(req, res, decodeURIComponent(id), action as 'extract' | 'classify');
    }
    if (!work) return next();
    work.catch((error: unknown) => {
      if (error instanceof UploadRefused) {
        if (!res.headersSent) return sendRefusal(req, res, error.apiError);
      }
      if (closedByClient(res)) return;
      if (res.headersSent) {
        req.log?.warn({ err: error }, 'document transfer broke off');
        return abortChunkedResponse(res);
      }
      if ((error as { code?: string }).code === 'UND_ERR_SOCKET' || (error as { code?: string }).code === 'ECONNREFUSED') {
        req.log?.error({ err: error }, 'membership service unreachable');
        return sendApiError(res, membershipErrorFormat, { status: 503, code: 'service_unavailable', message: 'The documents service is temporarily unavailable' }, String(req.id));
      }
      next(error);
    });
  };
}

/** The subgraph's refusal (status and GraphQL-shaped errors) as the membership API's error. */
function subgraphError(status: number, errors: GraphQLFormattedError[]): ApiError {
  const first = errors[0];
  const extensions = first?.extensions ?? {};
  if (status >= 500 || !first) return { status: 500, code: 'internal_error', message: 'An internal error occurred' };
  return {
    status,
    code: typeof extensions.reason === 'string' ? extensions.reason : String(extensions.code ?? 'invalid_request').toLowerCase(),
    message: first.message,
    param: typeof extensions.param === 'string' ? extensions.param : null,
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
