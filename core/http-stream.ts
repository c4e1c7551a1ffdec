import { Writable } from 'node:stream';
import type { Response } from 'express';

/**
 * Writes into `res` with backpressure and leaves it open: unlike piping into it, a failure
 * upstream does not destroy the response, so the caller still decides how the body ends.
 */
export function forwardTo(res: Response): Writable {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (res.write(chunk)) done();
      else res.once('drain', () => done());
    },
  });
  res.once('close', () => {
    if (!res.writableFinished) sink.destroy(new Error('The client closed the connection'));
  });
  return sink;
}

/**
 * Whether the client closed the connection before `res` was finished (it went away, or its side
 * reset the socket): what broke a stream into `res` was then the client, not its source.
 */
export function closedByClient(res: Response): boolean {
  return res.destroyed && !res.writableFinished;
}

/**
 * Ends a response whose body has started without HTTP/1.1's last chunk: the socket is closed once
 * what was written is flushed, so every client sees an incomplete body (curl: "transfer closed
 * with outstanding read data remaining"; fetch: "terminated") instead of a short but whole one.
 */
export function abortChunkedResponse(res: Response): void {
  if (res.socket && !res.socket.destroyed) res.socket.destroySoon();
  else res.destroy();
}
