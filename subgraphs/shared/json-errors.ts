import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';

/** A GraphQL-shaped error body, as the subgraph's other HTTP answers are. */
function send(res: Response, status: number, message: string, extensions: Record<string, unknown>): void {
  res.status(status).json({ errors: [{ message, extensions }] });
}

/**
 * The last handlers of a subgraph's HTTP app, so that nothing answers Express's HTML pages: an
 * unknown path is 404 NOT_FOUND, a body parser's refusal (malformed JSON, too large) its own 4xx,
 * anything else 500 with the request id only, the error itself going to the log.
 */
export function jsonErrorHandlers(logger: Logger) {
  const notFound = (req: Request, res: Response): void => send(res, 404, `No route ${req.method} ${req.path}`, { code: 'NOT_FOUND' });
  const failed = (error: Error & { status?: number; type?: string }, req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) return next(error);
    const status = error.status && error.status >= 400 && error.status < 500 ? error.status : 500;
    if (status < 500) return send(res, status, error.message, { code: status === 413 ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST', ...(error.type ? { reason: error.type.replace(/\./g, '_') } : {}) });
    (req.log ?? logger).error({ err: error }, 'request failed');
    send(res, 500, `Internal server error (request ${String(req.id)})`, { code: 'INTERNAL_SERVER_ERROR', requestId: String(req.id) });
  };
  return [notFound, failed] as const;
}
