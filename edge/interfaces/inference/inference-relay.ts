import type { IncomingHttpHeaders } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Agent, request } from 'undici';
import { sendApiError } from '../../rest/api-error.js';
import { openAIErrorFormat } from './inference.error-body.js';
import { abortChunkedResponse, closedByClient, forwardTo } from '../../../core/http-stream.js';
import { CLIENT_HEADER, PRINCIPAL_HEADER, signClient, signPrincipal } from '../../../core/principal.js';

// What the subgraph's answer carries that the client needs: the body's type, the wait a 429 or
// 503 asks for, and the streaming hints of server-sent events.
const RELAYED_HEADERS = ['content-type', 'retry-after', 'cache-control', 'x-accel-buffering'];

export interface InferenceRelayOptions {
  /** The public mount, e.g. /inference/text. */
  mount: string;
  /** Where the subgraph serves this interface, e.g. /openai/serviceT. */
  target: string;
  subgraphUrl: string;
  internalSecret: string;
  /** Keyless interfaces carry the client's address, signed, instead of a principal. */
  keyless: boolean;
  /** Shared keep-alive connections to the subgraph. */
  dispatcher: Agent;
}

/** Keep-alive connections from the edge to the inference subgraph, shared by its four mounts. */
export function relayAgent(): Agent {
  return new Agent({ keepAliveTimeout: 30_000, connections: 256, pipelining: 1 });
}

/**
 * Relays every request under an inference mount to the inference subgraph's HTTP interface, body
 * and answer streamed both ways (server-sent events reach the client chunk by chunk), with the
 * request's signed principal (or, keyless, its signed client address) and without its
 * Authorization header, which the edge has already read. A client that goes away aborts the
 * relayed request, which aborts the generation behind it and frees its slots.
 */
export function relayInference(options: InferenceRelayOptions) {
  const origin = new URL(options.subgraphUrl).origin;
  return async (req: Request, res: Response): Promise<void> => {
    const below = req.path.slice(options.mount.length) || '/';
    const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
    const controller = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    const headers: IncomingHttpHeaders = {
      'x-request-id': String(req.id),
      ...(options.keyless
        ? { [CLIENT_HEADER]: signClient(req.ip ?? 'unknown', options.internalSecret) }
        : { [PRINCIPAL_HEADER]: signPrincipal(req.principal!, options.internalSecret) }),
    };
    for (const name of ['content-type', 'content-length', 'transfer-encoding', 'accept']) {
      const value = req.headers[name];
      if (value !== undefined) headers[name] = value;
    }
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    try {
      const upstream = await request(`${origin}${options.target}${below}${query}`, {
        method: req.method as 'GET',
        headers: headers as Record<string, string>,
        body: hasBody ? req : undefined,
        signal: controller.signal,
        dispatcher: options.dispatcher,
      });
      res.status(upstream.statusCode);
      for (const name of RELAYED_HEADERS) {
        const value = upstream.headers[name];
        if (value !== undefined) res.setHeader(name, value);
      }
      if (upstream.headers['content-type']?.toString().startsWith('text/event-stream')) res.flushHeaders();
      await pipeline(upstream.body, forwardTo(res));
      res.end();
    } catch (error) {
      if (closedByClient(res) || controller.signal.aborted) {
        req.log?.debug('inference relay ended: the client closed the connection');
        return;
      }
      if (!res.headersSent) {
        // The inference service is down or restarting: the spec's "service temporarily down".
        req.log?.error({ err: error }, 'inference service unreachable');
        res.setHeader('Retry-After', '5');
        return sendApiError(res, openAIErrorFormat, { status: 503, code: 'service_unavailable', message: 'The inference service is temporarily unavailable' }, String(req.id));
      }
      req.log?.warn({ err: error }, 'inference relay broke off');
      abortChunkedResponse(res);
    }
  };
}

/**
 * The same interface when the inference subgraph runs in the edge's process: its routes are
 * called directly with the request (the body still unread, so it streams as over HTTP), under
 * the subgraph's path, with the principal the guard set or, keyless, the client's address. Nothing
 * is signed: nothing leaves the process. The public URL is restored for anything after them.
 */
export function callInference(options: { mount: string; target: string; keyless: boolean; routes: RequestHandler }) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const publicUrl = req.url;
    const query = publicUrl.includes('?') ? publicUrl.slice(publicUrl.indexOf('?')) : '';
    if (options.keyless) req.clientAddress = req.ip ?? 'unknown';
    req.url = `${options.target}${req.path.slice(options.mount.length) || '/'}${query}`;
    options.routes(req, res, (error?: unknown) => {
      req.url = publicUrl;
      next(error);
    });
  };
}
