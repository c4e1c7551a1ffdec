import { AsyncResource } from 'node:async_hooks';
import { Readable } from 'node:stream';
import express, { type RequestHandler } from 'express';

/** The content types a GraphQL client sends nearly always; any other goes through express.json. */
const PLAIN_JSON = new Set(['application/json', 'application/json; charset=utf-8']);

/**
 * /graphql's JSON body, as express.json({ limit }) reads it. The request nearly every client
 * sends (plain `application/json`, a Content-Length within the limit, no Content-Encoding, an
 * object or array first) is read and parsed here without body-parser's layers (type-is,
 * content-type, raw-body, debug: about 4 µs of the member lookup). Anything else, and any body
 * this reading cannot parse, gets express.json's own answer: an unparsed body is handed to it
 * again from the bytes read, so its 400s keep body-parser's words.
 */
export function graphqlBody(limitBytes: number): RequestHandler {
  const general = express.json({ limit: limitBytes });
  return (req, res, next) => {
    const headers = req.headers;
    // Parsed already (body-parser's own test: any body property, even undefined).
    const parsed = 'body' in (req as object);
    const size = Number(headers['content-length']);
    if (
      parsed ||
      !PLAIN_JSON.has(headers['content-type'] ?? '') ||
      !(size > 0 && size <= limitBytes) ||
      headers['content-encoding'] !== undefined ||
      headers['transfer-encoding'] !== undefined
    ) {
      general(req, res, next);
      return;
    }
    const chunks: Buffer[] = [];
    let done = false;
    // Bound to the request's async context, as raw-body binds its callback: the stream's events run
    // in the socket's, and the handlers after this one (spans, subgraph fetches) need the request's.
    const finish = AsyncResource.bind((error?: Error) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onFailure);
      req.off('close', onClose);
      if (error) return next(error);
      const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      const first = bytes[0];
      // `{` or `[` first, as body-parser's strict mode wants; leading blanks and refusals are its to answer.
      if (first === 0x7b || first === 0x5b) {
        try {
          req.body = JSON.parse(bytes.toString('utf8')) as unknown;
          return next();
        } catch {
          // body-parser words the refusal (below).
        }
      }
      replayTo(general, bytes, req, res, next);
    });
    const onData = (chunk: Buffer) => chunks.push(chunk);
    const onEnd = () => finish();
    const onFailure = (error: Error) => finish(Object.assign(error, { status: 400, type: 'request.aborted' }));
    // A client gone before the body's end: what raw-body answers, to a response no one reads.
    const onClose = () => finish(Object.assign(new Error('request aborted'), { status: 400, type: 'request.aborted' }));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onFailure);
    req.on('close', onClose);
  };
}

/** Runs express.json over bytes already read from `req`, and gives `req` what it parsed (or its error). */
function replayTo(parser: RequestHandler, bytes: Buffer, req: express.Request, res: express.Response, next: express.NextFunction): void {
  const replay = Object.assign(Readable.from([bytes]), { headers: req.headers }) as unknown as express.Request;
  parser(replay, res, (error?: unknown) => {
    req.body = (replay as { body?: unknown }).body;
    next(error);
  });
}
