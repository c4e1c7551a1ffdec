import type { IncomingMessage, ServerResponse } from 'node:http';
import { stdSerializers, type Logger } from 'pino';
import { redactRequest, redactResponse } from './logger.js';

declare module 'http' {
  interface IncomingMessage {
    /** The request's id: the client's `x-request-id` where one was accepted, else one made up. */
    id: string;
    /** A logger whose lines carry the request's id (`reqId`), made when first used. */
    log: Logger;
  }
}

const LINES = Symbol('request log lines');
const BOUND = Symbol('request logger');
const TIMED_OUT = Symbol('timed out');
const WRITE_LINE = Symbol('write the request line');
type LoggedRequest = IncomingMessage & { [LINES]?: Logger; [BOUND]?: Logger };
type LoggedResponse = ServerResponse & { [TIMED_OUT]?: boolean; [WRITE_LINE]?: () => void };

/**
 * Writes the line of a request answered 408 on its socket, past its handler (which is still
 * waiting for the body and may write to the dead response afterwards): the line says what the
 * client got, and is written now.
 */
export function noteTimedOut(res: ServerResponse): void {
  (res as LoggedResponse)[TIMED_OUT] = true;
  (res as LoggedResponse)[WRITE_LINE]?.();
}

/** What a timed-out request's client got, as the response serializer reads a response. */
const TIMED_OUT_RESPONSE = { headersSent: true, statusCode: 408, getHeaders: () => ({ connection: 'close' }) };
const withAccessor = new WeakSet<object>();

/**
 * `req.log` as an accessor on the requests' prototype (Express's `app.request`, which is there to
 * be extended, or IncomingMessage's), defined once per prototype: the child logger is made on
 * first read. An accessor defined on each request instead gave every request a hidden class of
 * its own (its getter a new closure each time), about 15 µs a request in the profile.
 */
function withLogAccessor(prototype: object): void {
  if (withAccessor.has(prototype)) return;
  withAccessor.add(prototype);
  Object.defineProperty(prototype, 'log', {
    configurable: true,
    enumerable: false,
    get(this: LoggedRequest): Logger | undefined {
      return (this[BOUND] ??= this[LINES]?.child({ reqId: this.id }));
    },
    set(this: LoggedRequest, value: Logger) {
      this[BOUND] = value;
    },
  });
}

export interface RequestLoggingOptions {
  /** The request's id; may set the response's `x-request-id`. */
  genReqId(req: IncomingMessage, res: ServerResponse): string;
  /** Requests that get no completion line (/health, polled by supervisors). */
  ignore?(req: IncomingMessage): boolean;
}

/**
 * One JSON line per request, written when its response is done: the request (method, URL, query,
 * headers, credentials redacted), the response (status, headers, `set-cookie` redacted) and the time taken, at info, or
 * at error for a 5xx or a broken response; `aborted: true` when the connection closed first,
 * `timedOut: true` when the request did not arrive in time (408, edge/edge-connections.ts).
 * `req.log` is a child bound to the request's id.
 *
 * This replaces pino-http, whose lines had the same fields: it made two child loggers on every
 * request, one of them bound to the whole request, and pino serialises a child's bindings when it
 * is made, so every request paid for copying and redacting its headers and for two loggers'
 * set-up (about a tenth of the edge's CPU on a REST lookup at 10 connections) whether or not a
 * line was written. Here nothing is serialised unless a line is written at its level, and the
 * child is made only for a handler that logs.
 */
export function requestLogging(logger: Logger, options: RequestLoggingOptions) {
  // pino-std-serializers' shapes, as pino-http logged them: the request redacted on its way out.
  const serializers = {
    req: stdSerializers.wrapRequestSerializer((serialized) => {
      const line = redactRequest(serialized as unknown as Parameters<typeof redactRequest>[0]);
      // Express's req.ip: the client behind the edge's trusted proxies (TRUST_PROXY), not the proxy.
      const client = (serialized.raw as { ip?: unknown } | undefined)?.ip;
      if (typeof client === 'string') line.remoteAddress = client;
      return line;
    }),
    res: stdSerializers.wrapResponseSerializer((serialized) => redactResponse(serialized as unknown as Parameters<typeof redactResponse>[0])),
  };
  const lines = logger.child({}, { serializers });
  return (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    req.id = options.genReqId(req, res);
    (req as LoggedRequest)[LINES] = lines;
    withLogAccessor(Object.getPrototypeOf(req) as object);
    if (!options.ignore?.(req)) {
      const start = Date.now();
      const done = (error?: Error) => {
        res.off('finish', done);
        res.off('close', done);
        res.off('error', done);
        (res as LoggedResponse)[WRITE_LINE] = undefined;
        const responseTime = Date.now() - start;
        if ((res as LoggedResponse)[TIMED_OUT]) {
          lines.info({ req, res: TIMED_OUT_RESPONSE, responseTime, timedOut: true }, 'request timed out before it had arrived');
        } else if (error || res.statusCode >= 500) {
          lines.error({ req, res, err: error ?? new Error(`failed with status code ${res.statusCode}`), responseTime }, 'request errored');
        } else if (!res.writableFinished) {
          // The connection closed before the response was all sent: the client went away (or a
          // stream it was reading ended with it). Its status is what had been set so far.
          lines.info({ req, res, responseTime, aborted: true }, 'request closed before its response was sent');
        } else {
          lines.info({ req, res, responseTime }, 'request completed');
        }
      };
      res.on('finish', done);
      res.on('close', done);
      res.on('error', done);
      (res as LoggedResponse)[WRITE_LINE] = done;
    }
    next();
  };
}
