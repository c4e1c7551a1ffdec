import { pipeline } from 'node:stream/promises';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { abortChunkedResponse, closedByClient } from '../../../core/http-stream.js';
import { DocumentService } from './document.service.js';
import type { DocumentSettings } from './document-settings.js';
import type { DocumentStorage } from './document-storage.js';
import { DocumentDuplicateError, DocumentTooLargeError, UnsupportedDocumentTypeError } from './document.errors.js';
import { NotFoundError } from '../../shared/not-found.error.js';
import { DomainError } from '../../../core/errors.js';

/** Where the membership subgraph takes document bytes in and gives them out; the edge relays here. */
export const DOCUMENT_ROUTES_PREFIX = '/documents';

/** The header carrying the uploaded file's name (percent-encoded: any Unicode name fits in a header). */
export const FILENAME_HEADER = 'x-document-filename';

/** HTTP status of a document error outside GraphQL (the REST upload and download). */
export function documentErrorStatus(error: GraphQLError): number {
  if (error instanceof DocumentTooLargeError) return 413;
  if (error instanceof UnsupportedDocumentTypeError) return 415;
  if (error instanceof DocumentDuplicateError) return 409;
  const code = error.extensions?.code;
  return code === 'NOT_FOUND' ? 404 : code === 'CONFLICT' ? 409 : 400;
}

/** A GraphQL-shaped error body, as the subgraph's other HTTP routes answer. */
function sendError(res: Response, error: GraphQLError): void {
  res.status(documentErrorStatus(error)).json({ errors: [{ message: error.message, extensions: error.extensions }] });
}

/** RFC 6266 Content-Disposition: an ASCII fallback name and the exact one as RFC 8187 filename*. */
export function contentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%;]/g, '_') || 'document';
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/** Reads and drops what is left of `req` (at most `limit` bytes), then answers; past the limit the connection closes. */
function drainThen(req: Request, res: Response, limit: number, answer: () => void): void {
  if (req.destroyed || req.readableEnded) {
    if (req.destroyed) res.setHeader('connection', 'close');
    return answer();
  }
  let read = 0;
  const onData = (chunk: Buffer) => {
    read += chunk.length;
    if (read <= limit) return;
    req.off('data', onData);
    req.off('end', onEnd);
    res.setHeader('connection', 'close');
    answer();
  };
  const onEnd = () => {
    req.off('data', onData);
    answer();
  };
  req.on('data', onData);
  req.once('end', onEnd);
  req.resume();
}

/**
 * The membership subgraph's document byte routes, behind the signed principal like every
 * subgraph HTTP route:
 * - POST /documents/uploads: the body is the file (any length up to the cap, streamed into
 *   storage); answers 201 with the staged upload's id, size, SHA-256 and sniffed type.
 * - PUT /documents/uploads/:id: the same into a ticket from createDocumentUpload.
 * - GET /documents/:id/content: the bytes, streamed, with their type, length and a safe name.
 */
export function createDocumentRoutes(options: { em: EntityManager; settings: DocumentSettings; storage: (em: EntityManager) => DocumentStorage; logger?: Logger }) {
  const router = express.Router();
  const serviceFor = (req: Request) => {
    const em = options.em.fork();
    return new DocumentService(em, req.principal!, options.settings, options.storage(em));
  };

  const stage = (withTicket: boolean) => async (req: Request, res: Response, next: NextFunction) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > options.settings.maxUploadBytes) {
      // Refused before a byte is read; the connection is closed so the client stops sending.
      res.setHeader('connection', 'close');
      return sendError(res, new DocumentTooLargeError(options.settings.maxUploadBytes));
    }
    // The name as sent; DocumentService.stage keeps it by storedFilename's rule or refuses it.
    let filename = 'upload';
    try {
      filename = decodeURIComponent(String(req.headers[FILENAME_HEADER] ?? 'upload')) || 'upload';
    } catch {
      // A malformed escape: the raw header is still a name.
      filename = String(req.headers[FILENAME_HEADER]);
    }
    try {
      // Not destroyed when the intake stops early (a refused type): the rest is drained below.
      const staged = await serviceFor(req).stage(req.iterator({ destroyOnReturn: false }), filename, withTicket ? String(req.params.id) : undefined);
      res.status(withTicket ? 200 : 201).json(staged);
    } catch (error) {
      if (error instanceof DomainError || error instanceof DocumentDuplicateError) {
        // Refused before the end of the body (a type refused on its first bytes): read the rest,
        // up to the cap, before answering, so the edge still sending it gets this answer and not a
        // broken pipe. Past the cap the connection is closed instead.
        if (!req.complete) return drainThen(req, res, options.settings.maxUploadBytes, () => sendError(res, error));
        return sendError(res, error);
      }
      next(error);
    }
  };
  router.post(`${DOCUMENT_ROUTES_PREFIX}/uploads`, stage(false));
  router.put(`${DOCUMENT_ROUTES_PREFIX}/uploads/:id`, stage(true));

  router.get(`${DOCUMENT_ROUTES_PREFIX}/:id/content`, async (req: Request, res: Response, next: NextFunction) => {
    const em = options.em.fork();
    const service = new DocumentService(em, req.principal!, options.settings, options.storage(em));
    const document = await service.find(String(req.params.id)).catch(next);
    if (document === undefined) return;
    if (!document) return sendError(res, new NotFoundError('document', String(req.params.id)));
    res.status(200);
    res.setHeader('content-type', document.mimeType);
    res.setHeader('content-length', String(document.sizeBytes));
    res.setHeader('content-disposition', contentDisposition(document.filename));
    res.setHeader('x-content-type-options', 'nosniff');
    // A stored HTML file must not run as a page of this origin if someone opens the link.
    res.setHeader('content-security-policy', "default-src 'none'; sandbox");
    res.setHeader('etag', `"${document.sha256}"`);
    try {
      await pipeline(options.storage(em).read(document.blobId), res);
    } catch (error) {
      if (closedByClient(res)) return;
      options.logger?.warn({ err: error, documentId: document.id }, 'document download broke off');
      if (!res.headersSent) return next(error);
      abortChunkedResponse(res);
    }
  });
  return router;
}
