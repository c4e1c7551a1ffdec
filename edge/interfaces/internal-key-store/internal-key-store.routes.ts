import type { MikroORM } from '@mikro-orm/postgresql';
import express, { type NextFunction, type Request, type Response } from 'express';
import { GraphQLError } from 'graphql';
import { z } from 'zod';
import { ERROR_CODES } from '../../../core/errors.js';
import {
  KEY_STORE_OPERATIONS,
  KEY_STORE_PATH,
  NONCE_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  internalSignatureRefusal,
  type KeyStore,
  type KeyStoreOperation,
} from '../../../core/key-store.js';
import { KEY_KINDS } from '../../../core/principal.js';
import { LocalKeyStore } from '../../../identity/local-key-store.js';
import { InternalNonces } from '../../../identity/internal-nonces.js';
import { STATUS_BY_CODE } from '../../rest/api-error.js';

/** A key store call is a few fields; anything near this is not one. */
const BODY_LIMIT = '8kb';

const id = z.string().min(1).max(128);
const account = z.string().min(1).max(64);
const instant = z.iso.datetime({ offset: true }).transform((value) => new Date(value));
const limit = z.number().nullable().optional();

// Shapes only: what the key store itself checks (kind, name length, limits' range, an expiry in
// the past) it refuses with the same errors as in process, so those checks stay there.
const INPUTS = {
  listKeys: z.strictObject({ account: account.optional(), kind: z.enum(KEY_KINDS).optional() }),
  createKey: z.strictObject({
    account,
    kind: z.string().min(1).max(32),
    name: z.string().max(1000).nullable().optional(),
    expiresAt: instant.nullable().optional(),
    hourlyLimit: limit,
    dailyLimit: limit,
  }),
  disableKey: z.strictObject({ id, account: account.optional() }),
  enableKey: z.strictObject({ id }),
  expireKey: z.strictObject({ id, at: instant }),
} satisfies Record<KeyStoreOperation, z.ZodType>;

type Inputs = { [Op in KeyStoreOperation]: z.output<(typeof INPUTS)[Op]> };

const CALLS: { [Op in KeyStoreOperation]: (store: KeyStore, input: Inputs[Op]) => Promise<unknown> } = {
  listKeys: (store, input) => store.listKeys(input),
  createKey: (store, input) => store.createKey(input),
  disableKey: (store, input) => store.disableKey(input.id, input.account),
  enableKey: (store, input) => store.enableKey(input.id),
  expireKey: (store, input) => store.expireKey(input.id, input.at),
};

function refuse(res: Response, status: number, code: string, message: string, extra: Record<string, unknown> = {}): void {
  res.status(status).json({ error: { code, message, extensions: { code, ...extra } } });
}

/** Keeps the extensions a domain error carries for its caller (code, param, reason), nothing internal. */
function domainExtensions(error: GraphQLError): Record<string, unknown> {
  const { code, param, reason } = error.extensions as Record<string, unknown>;
  return Object.fromEntries(Object.entries({ code, param, reason }).filter(([, value]) => value !== undefined));
}

function isDomainError(error: unknown): error is GraphQLError {
  return error instanceof GraphQLError && (ERROR_CODES as readonly unknown[]).includes(error.extensions.code) && error.extensions.code !== 'INTERNAL_SERVER_ERROR';
}

/**
 * The key store for subgraphs that run apart from the edge: `POST /internal/key-store/<operation>`.
 * Only callers holding INTERNAL_SECRET get in (an HMAC over timestamp, nonce, method, path and
 * body, at most five minutes old, each nonce accepted once); it is no public interface, so no key
 * and no client rate limit applies.
 * A domain error is answered as `{ error: { code, message, extensions } }` with its status, for
 * the client to raise the same error again (subgraphs/shared/key-store.client.ts).
 */
export function internalKeyStoreRoutes(options: { identityOrm: MikroORM; internalSecret: string; maxActiveKeysPerAccount?: number; store?: KeyStore }): express.Router {
  const store = options.store ?? new LocalKeyStore(options.identityOrm, { maxActiveKeysPerAccount: options.maxActiveKeysPerAccount });
  const nonces = new InternalNonces(options.identityOrm);
  const router = express.Router();
  const routes = express.Router();
  router.use(KEY_STORE_PATH, routes);

  routes.use((req, res, next) => {
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return refuse(res, 405, 'METHOD_NOT_ALLOWED', 'The key store answers POST only');
    }
    // Unsigned callers are turned away before their body is read.
    if (!req.get(TIMESTAMP_HEADER) || !req.get(NONCE_HEADER) || !req.get(SIGNATURE_HEADER)) return refuse(res, 401, 'UNAUTHENTICATED', 'This endpoint is for the platform\'s own services');
    next();
  });
  routes.use(express.raw({ type: () => true, limit: BODY_LIMIT }));
  routes.post('/:operation', async (req: Request, res: Response) => {
    const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const path = req.originalUrl.split('?')[0];
    const nonce = req.get(NONCE_HEADER);
    const refusal = internalSignatureRefusal(options.internalSecret, { timestamp: req.get(TIMESTAMP_HEADER), nonce, signature: req.get(SIGNATURE_HEADER) }, req.method, path, body);
    if (refusal) {
      req.log?.warn({ refusal }, 'internal key store call refused');
      return refuse(res, 401, 'UNAUTHENTICATED', refusal === 'stale' ? 'The request signature has expired' : 'The request signature is invalid');
    }
    // A signature that holds, for the first time only: the same call sent again is a replay.
    if (!(await nonces.claim(nonce!))) {
      req.log?.warn({ refusal: 'replayed' }, 'internal key store call refused');
      return refuse(res, 401, 'UNAUTHENTICATED', 'The request was already received; each signed call is accepted once');
    }
    const operation = String(req.params.operation) as KeyStoreOperation;
    if (!KEY_STORE_OPERATIONS.includes(operation)) return refuse(res, 404, 'NOT_FOUND', `No key store operation "${operation}"`);
    let json: unknown;
    try {
      json = body.length ? JSON.parse(body.toString('utf8')) : {};
    } catch {
      return refuse(res, 400, 'BAD_USER_INPUT', 'The body is not JSON');
    }
    const parsed = INPUTS[operation].safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const param = issue.path.join('.') || undefined;
      return refuse(res, 400, 'BAD_USER_INPUT', param ? `${param}: ${issue.message}` : issue.message, param ? { param } : {});
    }
    try {
      const result = await (CALLS[operation] as (store: KeyStore, input: unknown) => Promise<unknown>)(store, parsed.data);
      res.json({ result });
    } catch (error) {
      if (!isDomainError(error)) {
        req.log?.error({ err: error, operation }, 'internal key store call failed');
        return refuse(res, 500, 'INTERNAL_SERVER_ERROR', 'An internal error occurred');
      }
      const extensions = domainExtensions(error);
      const code = String(extensions.code);
      res.status(STATUS_BY_CODE[code] ?? 500).json({ error: { code, message: error.message, extensions } });
    }
  });
  routes.use((_req: Request, res: Response) => refuse(res, 404, 'NOT_FOUND', `The key store's operations are ${KEY_STORE_OPERATIONS.join(', ')}`));
  // The body parser's refusals (too large, unreadable), in this endpoint's own body.
  routes.use((error: Error & { status?: number }, _req: Request, res: Response, next: NextFunction) => {
    if (error.status === 413) return refuse(res, 413, 'PAYLOAD_TOO_LARGE', `A key store call is at most ${BODY_LIMIT}`);
    if (error.status && error.status >= 400 && error.status < 500) return refuse(res, error.status, 'BAD_REQUEST', error.message);
    next(error);
  });
  return router;
}
