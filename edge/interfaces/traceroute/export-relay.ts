import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream } from 'node:stream/web';
import type { NextFunction, Request, Response } from 'express';
import { abortChunkedResponse, closedByClient, forwardTo } from '../../../core/http-stream.js';
import { withoutCredentialParams } from '../../../core/logger.js';
import { sendApiError, type ErrorFormat } from '../../rest/api-error.js';
import { PRINCIPAL_HEADER, signPrincipal } from '../../../core/principal.js';

const RELAYED_HEADERS = ['content-type', 'content-disposition', 'allow', 'x-next-cursor'];

/**
 * Relays GET `<mount><path>` to the same path on a subgraph's HTTP routes, with the request's
 * signed principal and without its credentials (the edge has checked the key; `?api_key=` would
 * only reach the subgraph's log), and streams the answer back: backpressure runs end to end, so
 * memory does not grow with the body. Should the upstream body break off, the client's chunked
 * response is cut before its last chunk too, after what arrived (the subgraph's trailing error
 * record included). A refusal the subgraph answers as problem details (RFC 9457) is rendered in
 * the mount's own error body by `format`. Other requests go to `next`.
 */
export function relayStream(options: { mount: string; path: string; subgraphUrl: string; internalSecret: string; format: ErrorFormat }) {
  const full = options.mount + options.path;
  const origin = new URL(options.subgraphUrl).origin;
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (req.path !== full && req.path !== `${full}/`) return next();
    try {
      const search = withoutCredentialParams(new URL(req.originalUrl, 'http://edge').searchParams).toString();
      const upstream = await fetch(`${origin}${options.path}${search ? `?${search}` : ''}`, {
        method: req.method,
        headers: { [PRINCIPAL_HEADER]: signPrincipal(req.principal!, options.internalSecret), 'x-request-id': String(req.id) },
      });
      if (upstream.headers.get('content-type')?.startsWith('application/problem+json')) {
        // A HEAD answer has no body to read; a body that is not JSON still leaves the status to answer with.
        const problem = (req.method === 'HEAD' ? {} : await upstream.json().catch(() => ({}))) as { status?: number; code?: string; detail?: string; param?: string };
        const allow = upstream.headers.get('allow');
        if (allow) res.setHeader('allow', allow);
        return sendApiError(
          res,
          options.format,
          { status: problem.status ?? upstream.status, code: problem.code ?? 'internal_error', message: problem.detail ?? 'The request failed', ...(problem.param ? { param: problem.param } : {}) },
          String(req.id),
        );
      }
      res.status(upstream.status);
      for (const name of RELAYED_HEADERS) {
        const value = upstream.headers.get(name);
        if (value) res.setHeader(name, value);
      }
      if (!upstream.body) return void res.end();
      await pipeline(Readable.fromWeb(upstream.body as ReadableStream), forwardTo(res));
      res.end();
    } catch (error) {
      if (!res.headersSent) return next(error);
      // A client that goes away is not the platform's failure: debug, as the export handler does.
      if (closedByClient(res)) req.log?.debug('relayed stream ended: the client closed the connection');
      else req.log?.warn({ err: error }, 'relayed stream broke off');
      abortChunkedResponse(res);
    }
  };
}
