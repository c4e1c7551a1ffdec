import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { Socket } from 'node:net';
import type { ApolloServer } from '@apollo/server';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { GraphQLSchema } from 'graphql';
import type { Logger } from 'pino';
import { Redis } from 'ioredis';
import { DEFAULT_DASHBOARD_SETTINGS, DEFAULT_REQUEST_BOUNDS, type EdgeOptions } from './edge-settings.js';
import { EdgeConnections } from './edge-connections.js';
import { requestLogging } from '../core/request-log.js';
import { requestMetrics } from '../core/metrics/request-metrics.js';
import { sendApiError, type ErrorFormat } from './rest/api-error.js';
import { listen, type RunningService } from '../core/listen.js';
import type { EdgeContext } from '../core/edge-context.js';
import { IdempotencyOwner } from './idempotency/idempotency-owner.js';
import { edgeGuard } from './access/edge-guard.js';
import { RateLimiter } from './access/rate-limiter.js';
import { crossOrigin } from './access/cross-origin.js';
import { startFederatedGraph } from './federation/federated-graph.js';
import { ClusterPersistedQueries } from './federation/cluster-persisted-queries.js';
import { RedisPersistedQueries } from './federation/redis-persisted-queries.js';
import { KeyUseRecorder } from '../identity/key-use-recorder.js';
import { KeyCache } from '../identity/key-cache.js';
import { PathTemplates } from './interfaces/dashboard/path-template.js';
import { SessionAuthenticator } from './access/session-auth.js';
import { UsageRecorder } from './interfaces/dashboard/usage-recorder.js';
import { membershipRoutes } from './interfaces/membership/membership.routes.js';
import { graphqlErrorFormat } from './interfaces/graphql/graphql.error-body.js';
import { PUBLISHED_INTERFACES } from './interfaces/index.js';
import type { EdgeParts, MountedInterface } from './published-interface.js';
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from '../core/database-unavailable.js';
import { requestSpans, tracerOf, tracingOn } from '../core/telemetry/tracing.js';
import { DEFAULT_JSON_MAX_DEPTH } from '../core/json-depth.js';
import { KEY_STORE_PATH } from '../core/key-store.js';

export type { EdgeOptions } from './edge-settings.js';

export interface Edge {
  app: express.Express;
  httpServer: http.Server;
  apollo: ApolloServer<EdgeContext>;
  apiSchema: GraphQLSchema;
  /** Authenticated websockets the edge tracks now (each with its upstream clients and key re-checks). */
  openSockets(): number;
  stop(): Promise<void>;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;
/** Polled by supervisors and load balancers: no request line each. */
const PROBE_PATHS = new Set(['/health', '/livez', '/readyz']);

/**
 * Builds the public edge: the federated graph, the checks every interface shares (keys, limits,
 * sessions, idempotency), then each published interface mounted in its declared order
 * (interfaces/index.ts). Nothing listens until `listen`.
 */
export async function createEdge(options: EdgeOptions): Promise<Edge> {
  const app = express();
  app.disable('x-powered-by');
  // req.ip (limits per address, sign-in limits, request lines) and req.secure (the session
  // cookie's Secure) believe the forwarded headers of these proxies only.
  app.set('trust proxy', options.trustProxy ?? false);
  const jsonMaxDepth = options.jsonMaxDepth ?? DEFAULT_JSON_MAX_DEPTH;
  const requestBounds = options.requestBounds ?? DEFAULT_REQUEST_BOUNDS;
  const dashboard = { ...DEFAULT_DASHBOARD_SETTINGS, ...options.dashboard, path: options.dashboardPath ?? DEFAULT_DASHBOARD_SETTINGS.path };
  // Every path an interface serves under: the REST bases must not overlap another's to be served directly.
  const ownPaths = ['/graphql', ...PROBE_PATHS, KEY_STORE_PATH, dashboard.path, ...Object.values(options.restBases)];
  // Which interface's error body a failure the edge answers at `path` is in; GraphQL's where none owns it.
  const errorBodies: [string, ErrorFormat][] = PUBLISHED_INTERFACES.flatMap((published) => published.errorBodies?.(options) ?? []);
  const formatFor = (path: string) => errorBodies.find(([base]) => under(path, base))?.[1] ?? graphqlErrorFormat;
  // The edge's last word on a failure no interface answered: in the interface's error body.
  function handleError(error: Error & { status?: number; type?: string }, req: Request, res: Response, _next: NextFunction): void {
    // The key store's database down or restarting: worth a retry (503, Retry-After), not a 500.
    if (isDatabaseUnavailable(error)) {
      req.log.warn({ err: error }, 'the database is unavailable');
      sendApiError(res, formatFor(req.path), { status: 503, code: 'service_unavailable', message: DATABASE_UNAVAILABLE_MESSAGE }, String(req.id));
      return;
    }
    // Body-parser failures carry their status (400 bad JSON, 413 too large); anything else is ours.
    const status = error.status && error.status >= 400 && error.status < 500 ? error.status : 500;
    if (status === 500) req.log.error({ err: error }, 'request failed');
    const apiError = {
      status,
      code: status === 500 ? 'internal_error' : status === 413 ? 'payload_too_large' : (error.type ?? 'bad_request').replace(/\./g, '_'),
      message: status === 500 ? 'An internal error occurred' : error.message,
    };
    sendApiError(res, formatFor(req.path), apiError, String(req.id));
  }
  // Requests an interface serves directly skip Express's router (serveDirect): POSTs to exactly a
  // `mountPath` path, and anything under a `mountAt` base; the rest go to the app.
  const directPosts = new Map<string, express.RequestHandler[]>();
  const directBases: [string, express.RequestHandler[]][] = [];
  const appLayers: express.RequestHandler[] = [];
  const httpServer = http.createServer({ ...EdgeConnections.serverOptions(requestBounds), ...bornExpress(app) }, (req, res) => {
    const url = req.url!;
    let handlers = req.method === 'POST' ? directPosts.get(url) : undefined;
    if (!handlers && url.charCodeAt(0) === 0x2f) {
      const query = url.indexOf('?');
      const path = query === -1 ? url : url.slice(0, query);
      for (const [base, chain] of directBases) {
        if (under(path, base)) {
          handlers = chain;
          break;
        }
      }
    }
    if (handlers) serveDirect(app, handlers, req as Request, res as Response, handleError);
    else app(req, res);
  });
  // A request that arrives too slowly is answered 408 in its interface's error body (the dashboard
  // API's own).
  const connections = new EdgeConnections(httpServer, requestBounds, (path, requestId, message) => {
    const error = { status: 408, code: 'request_timeout', message };
    if (path !== undefined && under(path, `${dashboard.path}/api`)) return JSON.stringify({ error: { code: error.code, message } });
    return JSON.stringify((path !== undefined ? formatFor(path) : graphqlErrorFormat)(error, requestId ?? ''));
  });

  const redis = options.redisUrl ? await connectRedis(options.redisUrl, options.logger) : undefined;
  const graph = await startFederatedGraph({
    supergraphSdl: options.supergraphSdl,
    subgraphUrls: options.subgraphUrls,
    internalSecret: options.internalSecret,
    logger: options.logger,
    introspection: options.introspection,
    subgraphQueryDeduplication: options.subgraphQueryDeduplication,
    jsonMaxDepth,
    httpServer,
    // One store for every replica (Redis) or every worker of this edge (its cluster's primary).
    persistedQueries: redis ? new RedisPersistedQueries(redis) : cluster.isWorker ? new ClusterPersistedQueries() : undefined,
  });

  // A span per request, child of the client's traceparent, when tracing is on (OTEL_EXPORTER_OTLP_ENDPOINT).
  const useEverywhere = (handler: express.RequestHandler) => {
    appLayers.push(handler);
    app.use(handler);
  };
  if (tracingOn()) useEverywhere(requestSpans(edgeTracer));
  useEverywhere(
    requestLogging(options.logger, {
      genReqId: (req, res) => {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : `req_${randomUUID()}`;
        res.setHeader('x-request-id', id);
        return id;
      },
      ignore: (req) => PROBE_PATHS.has(req.url ?? ''),
    }),
  );
  // Requests by interface, route template and status (Prometheus: METRICS_PORT).
  const interfaceBases: [string, string][] = PUBLISHED_INTERFACES.flatMap((published) => (published.errorBodies?.(options) ?? []).map(([base]) => [base, published.name] as [string, string]));
  useEverywhere(
    requestMetrics('gateway', (path) =>
      PROBE_PATHS.has(path) ? 'health' : under(path, dashboard.path) ? 'dashboard' : (interfaceBases.find(([base]) => under(path, base))?.[1] ?? 'other'),
    ),
  );
  // Pages on the origins CORS_ORIGINS names may call with their keys; preflights are answered before any key is asked for.
  if (options.crossOrigins) useEverywhere(crossOrigin(options.crossOrigins, (path) => under(path, dashboard.path) || under(path, KEY_STORE_PATH)));
  // Marks this process's Idempotency-Key claims as alive while it runs.
  const idempotencyOwner = new IdempotencyOwner(options.identityOrm, options.logger.child({ part: 'idempotency' }));
  const limiter = new RateLimiter(redis);
  // One cache per edge process, told of every key change by the key store's notices (key-cache.ts).
  const keyCache = new KeyCache({ ttlMs: (options.keyCacheSeconds ?? 30) * 1000, logger: options.logger.child({ part: 'key-cache' }) });
  await keyCache.listen(String(options.identityOrm.config.get('clientUrl')));
  // "Last used" under Settings, API Keys: written once a minute per key, off the request's path.
  const keyUse = new KeyUseRecorder(options.identityOrm, options.logger.child({ part: 'key-use' }));
  // The dashboard's sessions: its own API, and an identity on /graphql besides keys.
  const sessions = new SessionAuthenticator(options.identityOrm, { idleMs: dashboard.sessionIdleMs, maxMs: dashboard.sessionMaxMs });
  // Membership REST and /graphql requests of live and test principals, counted for the dashboard's usage page.
  const usage = new UsageRecorder(options.identityOrm, {
    restBase: options.restBases.membership,
    templates: new PathTemplates(options.restBases.membership, Object.values(membershipRoutes).map((route) => route.path)),
    logger: options.logger.child({ part: 'usage' }),
  });
  useEverywhere(usage.middleware());

  const parts: EdgeParts = {
    app,
    httpServer,
    options,
    graph,
    apollo: graph.apollo,
    apiSchema: graph.apiSchema,
    identityOrm: options.identityOrm,
    logger: options.logger,
    limiter,
    redis,
    keyCache,
    keyUse,
    sessions,
    usage,
    idempotencyOwner,
    dashboard,
    jsonMaxDepth,
    guard: (rules, publicPaths = [], withSessions) =>
      tracedChecks(rules.name, edgeGuard(options.identityOrm, limiter, options.limitsOff ? { ...rules, windows: () => [] } : rules, publicPaths, keyCache, withSessions, keyUse)),
    // Sofa reads the raw body itself, so no body parser runs before a REST mount.
    mountAt: (base, ...handlers) => {
      app.use((req, res, next) => (under(req.path, base) ? chain(handlers, req, res, next) : next()));
      // Straight to these handlers when no other interface's path is under the base or above it
      // (a REST base set over the dashboard's, say): Express's order then decides, as it always did.
      if (!ownPaths.some((path) => path !== base && (under(path, base) || under(base, path)))) directBases.push([base, [...appLayers, ...handlers]]);
    },
    mountPath: (path, ...handlers) => {
      app.use(path, ...handlers);
      directPosts.set(path, [...appLayers, prefixed(path), ...handlers]);
    },
  };
  const mounted: MountedInterface[] = [];
  for (const published of PUBLISHED_INTERFACES) {
    const result = await published.mount(parts);
    if (result) mounted.push(result);
  }

  app.use(handleError);

  return {
    app,
    httpServer,
    apollo: graph.apollo,
    apiSchema: graph.apiSchema,
    openSockets: () => mounted.reduce((total, part) => total + (part.openSockets?.() ?? 0), 0),
    stop: async () => {
      // Keep-alive connections end with the responses under way, so that no client sends its
      // next request to a process on its way out.
      connections.drain();
      // The interfaces first (websockets close with 1001, going away), then the HTTP drain.
      for (const part of mounted) await part.stop?.();
      await graph.apollo.stop();
      await redis?.quit();
      await usage.close();
      await keyCache.close();
      await keyUse.flush();
      await idempotencyOwner.close();
    },
  };
}

const edgeTracer = tracerOf('gateway');

/** The edge's checks (key, limits, session) as a span of their own, from the start until passed or refused. */
function tracedChecks(name: string, checks: express.RequestHandler): express.RequestHandler {
  if (!tracingOn()) return checks;
  return (req, res, next) => {
    const span = edgeTracer.startSpan(`edge checks ${name}`);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      span.setAttribute('http.response.status_code', res.headersSent ? res.statusCode : 0);
      span.end();
    };
    res.once('finish', end);
    checks(req, res, (error?: unknown) => {
      end();
      next(error);
    });
  };
}

function under(path: string, base: string): boolean {
  return path === base || path.startsWith(`${base}/`);
}

/**
 * Request and response classes whose objects are made with Express's prototypes (app.request,
 * app.response), so that Express's setPrototypeOf on each request finds nothing to change:
 * changing an object's prototype is slow in itself and leaves every later property read on it
 * going through a new hidden class.
 */
function bornExpress(app: express.Express): Pick<http.ServerOptions, 'IncomingMessage' | 'ServerResponse'> {
  function ExpressRequest(socket: Socket) {
    return Reflect.construct(http.IncomingMessage, [socket], ExpressRequest) as http.IncomingMessage;
  }
  ExpressRequest.prototype = app.request;
  function ExpressResponse(req: http.IncomingMessage, options?: object) {
    return Reflect.construct(http.ServerResponse, [req, options], ExpressResponse) as http.ServerResponse;
  }
  ExpressResponse.prototype = app.response;
  return { IncomingMessage: ExpressRequest as unknown as typeof http.IncomingMessage, ServerResponse: ExpressResponse as unknown as typeof http.ServerResponse };
}

/** The URL as Express's app.use(path) leaves it for the handlers mounted there: the path stripped, kept in baseUrl. */
function prefixed(path: string): express.RequestHandler {
  return (req, _res, next) => {
    req.baseUrl = path;
    req.url = '/';
    next();
  };
}

/**
 * A request to a path an interface mounted with `mountPath` (POST) or `mountAt`, served by the
 * same handlers as Express would run (the edge-wide layers, then the interface's), in order,
 * without the router's matching of every layer against the path. Sets up the request and response as Express's app.handle does.
 * The member lookup's router and layer matching were about 8 µs of the edge's CPU per request (docs/profiling.md).
 */
function serveDirect(app: express.Express, handlers: express.RequestHandler[], req: Request, res: Response, onError: express.ErrorRequestHandler): void {
  req.res = res;
  res.req = req;
  Object.setPrototypeOf(req, app.request);
  Object.setPrototypeOf(res, app.response);
  res.locals ??= Object.create(null) as Record<string, unknown>;
  req.originalUrl = req.url;
  req.baseUrl = '';
  req.params = {};
  let at = 0;
  const next = (error?: unknown): void => {
    if (error !== undefined && error !== null && error !== 'route' && error !== 'router') {
      void onError(error, req, res, () => undefined);
      return;
    }
    const handler = handlers[at++];
    // Every chain ends in a handler that answers everything under its path; should one pass on, no other would answer.
    if (!handler) {
      void onError(Object.assign(new Error(`No endpoint answers ${req.method} ${req.path}`), { status: 404, type: 'not_found' }), req, res, () => undefined);
      return;
    }
    try {
      const returned: unknown = handler(req, res, next);
      if (returned instanceof Promise) returned.catch((rejected: unknown) => next(rejected ?? new Error('Rejected promise')));
    } catch (thrown) {
      next(thrown);
    }
  };
  next();
}

function chain(handlers: express.RequestHandler[], req: Request, res: Response, next: NextFunction): void {
  const [first, ...rest] = handlers;
  if (!first) return next();
  first(req, res, (error?: unknown) => (error ? next(error) : chain(rest, req, res, next)));
}

/** Connects to Redis and waits until it answers, so a wrong REDIS_URL fails the start, not requests. */
async function connectRedis(url: string, logger: Logger): Promise<Redis> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  // ioredis reconnects by itself; an outage is logged, and counting falls back to in process.
  redis.on('error', (error: Error) => logger.warn({ err: error }, 'Redis is unreachable; counting in process'));
  try {
    await redis.connect();
    await redis.ping();
    return redis;
  } catch (error) {
    redis.disconnect();
    throw new Error(`Cannot reach Redis at REDIS_URL: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Binds the edge to its public port. */
export async function listenEdge(edge: Edge, port: number, host: string): Promise<RunningService> {
  const bound = await listen(edge.httpServer, port, host, 'The gateway');
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return { name: 'gateway', port: bound, url: `http://${shown}:${bound}/graphql`, stop: edge.stop };
}
