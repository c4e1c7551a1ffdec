import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { faultPoint } from '../../core/fault-points.js';
import { IDEMPOTENCY_RETENTION_MS, IDEMPOTENT_REPLAYED_HEADER, type IdempotentRun } from '../../core/idempotency.js';
import { IdempotencyRecord } from '../../identity/idempotency-record.entity.js';
import { idempotencyOwnerFor, type IdempotencyOwner } from './idempotency-owner.js';
import { apiErrorFromGraphQL, sendApiError, type ErrorFormat } from '../rest/api-error.js';

/*
 * Idempotency-Key policy (after Stripe's):
 * - Applies to POST requests that carry an `Idempotency-Key` header: 1 to 255 printable ASCII
 *   characters, else 400 invalid_idempotency_key. Other methods, and POSTs without the header,
 *   pass through untouched.
 * - Keys belong to the authenticated account and mode: one account's key, or a test-mode key,
 *   never answers for another account or for live mode.
 * - The first request with a key runs; its response (status, content type, body) is kept for 24
 *   hours. A retry with the same method, path (with its query string) and body bytes gets that
 *   response again, with `Idempotent-Replayed: true`, and nothing runs a second time.
 * - The same key with another method, path or body: 400 idempotency_key_reused.
 * - A retry while the first request still runs in a live edge process waits for it (polling) for
 *   up to 10 seconds and then replays its response; after that it gets 409
 *   idempotency_key_in_use and may retry. A claim whose edge process died (its owner lock is
 *   released: idempotency-owner.ts) is taken over at once.
 * - Whether a write committed is decided where it happened, not here: the key travels with every
 *   subgraph fetch, and a subgraph keeps a keyed mutation's answer in the transaction of its
 *   writes (subgraphs/shared/idempotent-mutations.plugin.ts). A request taken over, or retried
 *   after a 5xx, runs again here, and the subgraph replays what committed instead of writing twice.
 * - Responses with status 5xx, 408 or 429 are not kept here: the key is released so a retry runs
 *   again (and reaches the subgraph's record). Other 4xx are kept and replayed, as Stripe does.
 *   On /graphql, where errors come with status 200, the status judged is the one the REST bridge
 *   would give the same errors.
 * - Records older than 24 hours are ignored; each new key removes up to 100 of them.
 */

// 5xx, 408 and 429 say "try again": a retry must be able to run.
function isKeptStatus(status: number): boolean {
  return status < 500 && status !== 408 && status !== 429;
}

export type IdempotencyErrorCode =
  | 'invalid_idempotency_key'
  | 'idempotency_key_reused'
  | 'idempotency_key_in_use'
  | 'payload_too_large';

/** Answers the middleware's own refusals in the interface's error body. */
export type IdempotencyResponder = (
  req: Request,
  res: Response,
  status: number,
  code: IdempotencyErrorCode,
  message: string,
) => void;

export interface IdempotencyOptions {
  /** How its refusals are answered: in the error body of the interface it guards. */
  respond: IdempotencyResponder;
  /** The status the keep-or-release rule judges; the HTTP status unless given. */
  statusOf?: (response: { status: number; contentType: string | null; body: Buffer }) => number;
  /** How long a response is replayed; older records are ignored and swept. */
  retentionMs?: number;
  /** How long a retry waits for the first request with its key before 409. */
  waitMs?: number;
  pollMs?: number;
  /** Whose claims are alive; one per process (shared per key store) unless given. */
  owner?: IdempotencyOwner;
  /** Largest request body read (the downstream parsers' limit). */
  bodyLimit?: number;
  /** Largest response kept; a larger one is sent but not kept, and the key is released. */
  responseLimit?: number;
  /** Expired records removed per new key. */
  sweepBatch?: number;
}

const DEFAULTS = {
  retentionMs: IDEMPOTENCY_RETENTION_MS,
  waitMs: 10_000,
  pollMs: 50,
  bodyLimit: 1024 * 1024,
  responseLimit: 1024 * 1024,
  sweepBatch: 100,
};

const VALID_KEY = /^[\x20-\x7e]{1,255}$/;

/**
 * GraphQL answers errors with 200: judge a response with errors by the status the REST bridge
 * would give them, so a failure that is a 500 over REST is not kept over GraphQL either.
 */
export function graphqlStatusOf(response: { status: number; contentType: string | null; body: Buffer }): number {
  if (response.status !== 200 || !response.contentType?.includes('json')) return response.status;
  try {
    const parsed = JSON.parse(response.body.toString('utf8')) as { errors?: unknown };
    return Array.isArray(parsed.errors) && parsed.errors.length ? apiErrorFromGraphQL(parsed.errors).status : response.status;
  } catch {
    return response.status;
  }
}

/** A responder writing the refusal in one of the edge's error formats (membership, GraphQL, ...). */
export function respondWith(format: ErrorFormat): IdempotencyResponder {
  return (req, res, status, code, message) => sendApiError(res, format, { status, code, message }, String(req.id));
}

type TakenBody = { kind: 'body'; body: Buffer } | { kind: 'too_large' } | { kind: 'aborted' };

/**
 * Reads the whole request body and puts it back in front of the stream before its `end` event,
 * so the parser after this middleware (express.json, express.raw in the bridge) reads it as if
 * untouched. Reading exactly the buffered length never makes the stream emit `end`, and Node's
 * streams allow one last `unshift` before it (endReadableNT checks for it).
 */
function takeBody(req: IncomingMessage, limit: number): Promise<TakenBody> {
  if (req.readableEnded) return Promise.reject(new Error('idempotency() must run before any body parser'));
  // Nothing to read: the stream is left alone, so the parsers see it exactly as they would have.
  const length = req.headers['content-length'];
  if (length === '0' || (length === undefined && req.headers['transfer-encoding'] === undefined)) {
    return Promise.resolve({ kind: 'body', body: Buffer.alloc(0) });
  }
  if (length !== undefined && Number(length) > limit) return Promise.resolve({ kind: 'too_large' });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (outcome: TakenBody | Error) => {
      req.off('readable', drain);
      req.off('error', settle);
      req.off('close', closed);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    function closed(): void {
      if (!req.complete) settle({ kind: 'aborted' });
    }
    function drain(): boolean {
      while (req.readableLength > 0) {
        const chunk = req.read(req.readableLength) as Buffer | null;
        if (chunk === null) break;
        chunks.push(chunk);
        size += chunk.length;
        if (size > limit) {
          settle({ kind: 'too_large' });
          return true;
        }
      }
      if (!req.complete) return false;
      const body = Buffer.concat(chunks);
      if (body.length) req.unshift(body);
      settle({ kind: 'body', body });
      return true;
    }
    if (drain()) return;
    req.on('readable', drain);
    req.on('error', settle);
    req.on('close', closed);
  });
}

interface CapturedResponse {
  status: number;
  contentType: string | null;
  /** Null when the body outgrew the limit. */
  body: Buffer | null;
}

/**
 * Tees what the handlers write to `res`. When they call `end`, the response is handed to `keep`
 * and really ended only once `keep` has settled: a client holding the response can count on a
 * retry being replayed, and a crash can no longer fall between sending and keeping.
 */
function captureResponse(res: Response, limit: number, run: IdempotentRun, keep: (captured: CapturedResponse) => Promise<void>): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let overflow = false;
  let kept: Promise<void> | undefined;
  const tee = (chunk: unknown, encoding: unknown) => {
    if (overflow || chunk == null || typeof chunk === 'function') return;
    const buffer =
      typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : Buffer.from(chunk as Uint8Array);
    size += buffer.length;
    if (size > limit) {
      overflow = true;
      chunks.length = 0;
    } else {
      chunks.push(buffer);
    }
  };
  const write = res.write as (...args: unknown[]) => boolean;
  const end = res.end as (...args: unknown[]) => Response;
  res.write = function (this: Response, ...args: unknown[]) {
    if (!kept) tee(args[0], args[1]);
    return write.apply(this, args);
  } as Response['write'];
  res.end = function (this: Response, ...args: unknown[]) {
    if (!kept) {
      tee(args[0], args[1]);
      // A subgraph answered from what an earlier run committed: this is a replay too.
      if (run.replayed && !res.headersSent) res.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
      const contentType = res.getHeader('content-type');
      kept = keep({
        status: res.statusCode,
        contentType: contentType === undefined ? null : String(contentType),
        body: overflow ? null : Buffer.concat(chunks),
      });
    }
    // Later calls, if any, keep their order behind the first.
    void kept.then(() => end.apply(this, args));
    return this;
  } as Response['end'];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Claim =
  | { kind: 'owner'; id: string; takenOver: boolean }
  | { kind: 'replay'; record: IdempotencyRecord }
  | { kind: 'reused' }
  | { kind: 'in_use' }
  | { kind: 'gone' };

/**
 * Stripe's Idempotency-Key semantics for POST (the policy above). Mount it after authentication,
 * which sets `req.principal`, and before any body parser.
 */
export function idempotency(identityOrm: MikroORM, options: IdempotencyOptions) {
  const settings = { ...DEFAULTS, ...options };
  const respond = options.respond;
  const owner = options.owner ?? idempotencyOwnerFor(identityOrm);

  /** Expired records, oldest first, a bounded batch at a time: no timer keeps the process alive. */
  async function sweep(): Promise<void> {
    const em = identityOrm.em.fork();
    const cutoff = new Date(Date.now() - settings.retentionMs);
    const rows = await em
      .createQueryBuilder(IdempotencyRecord)
      .select('id')
      .where({ createdAt: { $lt: cutoff } })
      .orderBy({ createdAt: 'asc' })
      .limit(settings.sweepBatch)
      .execute('all');
    if (rows.length) await em.nativeDelete(IdempotencyRecord, { id: { $in: rows.map((row) => row.id) }, createdAt: { $lt: cutoff } });
  }

  /** Takes the key in one statement, or finds out what became of the request that took it. */
  async function claim(
    scope: { accountId: string; mode: IdempotencyRecord['mode']; key: string },
    fingerprint: string,
    clientGone: () => boolean,
  ): Promise<Claim> {
    const deadline = Date.now() + settings.waitMs;
    const ownerLock = await owner.token();
    for (;;) {
      const em = identityOrm.em.fork();
      const id = randomUUID();
      const inserted = await em
        .createQueryBuilder(IdempotencyRecord)
        .insert({ id, account: scope.accountId, mode: scope.mode, key: scope.key, fingerprint, state: 'in_progress', ownerLock, createdAt: new Date() })
        .onConflict(['account', 'mode', 'key'])
        .ignore()
        .execute('run');
      if (inserted.affectedRows === 1) return { kind: 'owner', id, takenOver: false };

      const record = await em.findOne(IdempotencyRecord, { account: scope.accountId, mode: scope.mode, key: scope.key });
      if (!record) continue; // released or swept between the two statements: claim again
      const age = Date.now() - record.createdAt.getTime();
      if (age >= settings.retentionMs) {
        await em.nativeDelete(IdempotencyRecord, { id: record.id });
        continue;
      }
      if (record.fingerprint !== fingerprint) return { kind: 'reused' };
      if (record.state === 'completed') return { kind: 'replay', record };
      if (!(await owner.isAlive(record.ownerLock))) {
        // Its process died: nobody runs it. Only that claim, and only if still unfinished and
        // still that owner's: a late completion or another taker wins.
        const taken = await em.nativeUpdate(IdempotencyRecord, { id: record.id, state: 'in_progress', ownerLock: record.ownerLock ?? null }, { ownerLock });
        if (taken === 1) return { kind: 'owner', id: record.id, takenOver: true };
        continue;
      }
      if (clientGone()) return { kind: 'gone' };
      if (Date.now() + settings.pollMs > deadline) return { kind: 'in_use' };
      await sleep(settings.pollMs);
    }
  }

  /** Keeps the owner's response, or releases the key when the response is not to be kept. */
  async function settle(id: string, captured: CapturedResponse, log: Logger | undefined): Promise<void> {
    const em = identityOrm.em.fork();
    const { body } = captured;
    if (body === null || !isKeptStatus(settings.statusOf ? settings.statusOf({ ...captured, body }) : captured.status)) {
      if (body === null) log?.warn({ idempotencyRecord: id }, 'response too large to keep for Idempotency-Key replays; key released');
      await em.nativeDelete(IdempotencyRecord, { id, state: 'in_progress' });
      return;
    }
    const updated = await em.nativeUpdate(
      IdempotencyRecord,
      { id, state: 'in_progress' },
      {
        state: 'completed',
        responseStatus: captured.status,
        responseContentType: captured.contentType,
        responseBody: body,
      },
    );
    // Taken over as abandoned while this request ran: the newer claim's response stands.
    if (updated === 0) log?.warn({ idempotencyRecord: id }, 'Idempotency-Key claim was taken over before the response was kept');
  }

  async function handle(req: Request, res: Response, next: NextFunction, key: string): Promise<void> {
    if (!VALID_KEY.test(key)) {
      discardBody(req);
      respond(req, res, 400, 'invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
      return;
    }
    const principal = req.principal;
    if (!principal) throw new Error('idempotency() must run after authentication: the request has no principal');

    const taken = await takeBody(req, settings.bodyLimit);
    if (taken.kind === 'aborted') return;
    if (taken.kind === 'too_large') {
      // The rest of the body is not worth reading; the connection goes with it.
      res.setHeader('connection', 'close');
      respond(req, res, 413, 'payload_too_large', `The request body exceeds ${settings.bodyLimit} bytes`);
      return;
    }
    const fingerprint = createHash('sha256').update(`${req.method} ${req.originalUrl}\n`).update(taken.body).digest('hex');

    let gone = false;
    res.once('close', () => {
      gone = true;
    });
    const outcome = await claim({ accountId: principal.accountId, mode: principal.mode, key }, fingerprint, () => gone);
    const log = (req as { log?: Logger }).log;
    switch (outcome.kind) {
      case 'owner': {
        const run: IdempotentRun = { key, replayed: false };
        req.idempotency = run;
        if (outcome.takenOver) log?.info({ idempotencyRecord: outcome.id }, 'Idempotency-Key claim of a process that died taken over; its subgraph writes, if any committed, are replayed');
        captureResponse(res, settings.responseLimit, run, async (captured) => {
          faultPoint('edge.idempotency.answered');
          try {
            await settle(outcome.id, captured, log);
          } catch (error) {
            // The client still gets its answer; a retry waits, then takes the key over as abandoned.
            log?.error({ err: error, idempotencyRecord: outcome.id }, 'could not keep the response for Idempotency-Key replays');
            return;
          }
          sweep().catch((error: unknown) => log?.warn({ err: error }, 'could not sweep expired Idempotency-Key records'));
        });
        faultPoint('edge.idempotency.claimed');
        next();
        return;
      }
      case 'replay': {
        discardBody(req);
        const { record } = outcome;
        res.status(record.responseStatus ?? 200);
        if (record.responseContentType) res.setHeader('content-type', record.responseContentType);
        res.setHeader('idempotent-replayed', 'true');
        res.end(record.responseBody ?? Buffer.alloc(0));
        return;
      }
      case 'reused':
        discardBody(req);
        respond(
          req,
          res,
          400,
          'idempotency_key_reused',
          'This Idempotency-Key was already used with another request: a key can only be retried with the same method, path and body',
        );
        return;
      case 'in_use':
        discardBody(req);
        respond(
          req,
          res,
          409,
          'idempotency_key_in_use',
          'A request with this Idempotency-Key is still being processed; retry later',
        );
        return;
      case 'gone':
        discardBody(req);
        return;
    }
  }

  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.method !== 'POST') return next();
    const key = req.header('idempotency-key');
    if (key === undefined) return next();
    handle(req, res, next, key).catch(next);
  };
}

declare global {
  namespace Express {
    interface Request {
      /** Set for a POST that runs under an Idempotency-Key: its subgraph fetches carry the key. */
      idempotency?: IdempotentRun;
    }
  }
}

/** The body nobody will read is dropped, so the connection can serve its next request. */
function discardBody(req: Request): void {
  req.resume();
}
