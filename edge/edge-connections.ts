import type http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { noteTimedOut } from '../core/request-log.js';
import type { RequestBounds } from './edge-settings.js';

/** The body of a 408, in the error format of the interface at `path` (undefined: headers never came). */
export type TimeoutBody = (path: string | undefined, requestId: string | undefined, message: string) => string;

interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
}

// Node's own answers to requests it cannot parse (lib/_http_server.js), kept for the errors that are not timeouts.
const PARSE_ERROR_ANSWERS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n',
};
const BAD_REQUEST_ANSWER = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';

/**
 * The edge's HTTP connections as a front proxy keeps them:
 * - bounds on a request's arrival: its headers and the whole request (Node's headersTimeout and
 *   requestTimeout) and its body's rate, measured per window (nginx's client_body_timeout only
 *   sees silence; one byte every few seconds is not silence). Past a bound the client gets 408 in
 *   its interface's error body, if no response has begun, and the connection is closed.
 * - a drain: once the edge stops, every response says `Connection: close` and idle keep-alive
 *   connections are closed, so no client sends its next request to a process on its way out.
 */
export class EdgeConnections {
  /** The exchange each connection is in now (the last request it brought). */
  private readonly current = new WeakMap<Socket, Exchange>();
  /** Responses not finished yet, for the drain to mark. */
  private readonly unfinished = new Set<ServerResponse>();
  private draining = false;

  /** Node's part of the bounds, for http.createServer. */
  static serverOptions(bounds: RequestBounds): http.ServerOptions {
    return {
      headersTimeout: bounds.headersTimeoutMs,
      requestTimeout: bounds.requestTimeoutMs,
      // Node looks for requests past either bound this often (30 s unless told): a tenth of the
      // shorter one cuts within a tenth of it.
      connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(Math.min(bounds.headersTimeoutMs, bounds.requestTimeoutMs) / 10))),
    };
  }

  constructor(
    private readonly server: http.Server,
    private readonly bounds: RequestBounds,
    private readonly timeoutBody: TimeoutBody,
  ) {
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.request(req, res));
    // Node's requestTimeout and headersTimeout arrive here as ERR_HTTP_REQUEST_TIMEOUT.
    server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => this.clientError(error, socket));
  }

  /** From now on every response closes its connection; idle keep-alive connections close now. */
  drain(): void {
    this.draining = true;
    for (const res of this.unfinished) if (!res.headersSent) res.shouldKeepAlive = false;
    this.server.closeIdleConnections();
  }

  private request(req: IncomingMessage, res: ServerResponse): void {
    this.current.set(req.socket, { req, res });
    if (this.draining) res.shouldKeepAlive = false;
    this.unfinished.add(res);
    res.once('close', () => this.unfinished.delete(res));
    // A body that came whole with its headers (most do) is complete once this read is parsed,
    // before any microtask runs: only one still arriving is watched.
    if (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length']) > 0) {
      queueMicrotask(() => {
        if (!req.complete && !req.socket.destroyed) this.watchBody(req, res);
      });
    }
  }

  /**
   * Checks the body's arrival once a window: a window that brought fewer than the minimum rate's
   * bytes ends the request. The socket's byte count is the client's rate as long as the edge reads;
   * a window in which the edge paused the socket (its handler or upstream slower than the client)
   * is the edge's doing and does not count.
   */
  private watchBody(req: IncomingMessage, res: ServerResponse): void {
    const { bodyTimeoutMs, bodyMinBytesPerSecond } = this.bounds;
    // A window without a single byte is too slow whatever the rate.
    const minBytes = Math.max(1, (bodyMinBytesPerSecond * bodyTimeoutMs) / 1000);
    const socket = req.socket;
    let readBefore = socket.bytesRead;
    let heldBack = socket.isPaused();
    const onPause = () => (heldBack = true);
    const timer = setInterval(() => {
      if (req.complete || socket.destroyed) return stop();
      const read = socket.bytesRead - readBefore;
      if (read < minBytes && !heldBack && !socket.isPaused()) {
        stop();
        this.timeOut(socket, { req, res }, `The request body arrived slower than ${bodyMinBytesPerSecond} bytes per second over ${bodyTimeoutMs} ms`);
        return;
      }
      readBefore = socket.bytesRead;
      heldBack = socket.isPaused();
    }, bodyTimeoutMs);
    const stop = () => {
      clearInterval(timer);
      socket.off('pause', onPause);
      socket.off('close', stop);
      req.off('end', stop);
    };
    socket.on('pause', onPause);
    socket.once('close', stop);
    req.once('end', stop);
  }

  private clientError(error: NodeJS.ErrnoException, socket: Socket): void {
    const exchange = this.current.get(socket);
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      // A request under way has outlived the whole request's bound; otherwise the headers never came.
      const arriving = exchange && !exchange.res.writableFinished ? exchange : undefined;
      const message = arriving
        ? `The request did not arrive within ${this.bounds.requestTimeoutMs} ms`
        : `The request headers did not arrive within ${this.bounds.headersTimeoutMs} ms`;
      this.timeOut(socket, arriving, message);
      return;
    }
    if (socket.writable && this.canAnswer(exchange)) socket.write(PARSE_ERROR_ANSWERS[error.code ?? ''] ?? BAD_REQUEST_ANSWER);
    socket.destroy(error);
  }

  /** Whether nothing of a response is on the connection yet, so an answer of ours can go first. */
  private canAnswer(exchange: Exchange | undefined): boolean {
    return !exchange || exchange.res.writableFinished || !exchange.res.headersSent;
  }

  /**
   * 408 straight onto the socket, past the handler still waiting for the body (whatever it writes
   * later goes nowhere), then the connection closes.
   */
  private timeOut(socket: Socket, exchange: Exchange | undefined, message: string): void {
    if (socket.writable && this.canAnswer(exchange)) {
      const underWay = exchange && !exchange.res.writableFinished ? exchange : undefined;
      const requestId = underWay?.req.id;
      const body = this.timeoutBody(underWay ? pathOf(underWay.req.url) : undefined, requestId, message);
      if (underWay) noteTimedOut(underWay.res);
      socket.write(
        'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n${requestId ? `X-Request-Id: ${requestId}\r\n` : ''}\r\n${body}`,
      );
    }
    socket.destroy();
  }
}

function pathOf(url: string | undefined): string {
  const path = url ?? '/';
  const query = path.indexOf('?');
  return query === -1 ? path : path.slice(0, query);
}
