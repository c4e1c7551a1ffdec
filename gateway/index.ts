import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { ApolloGateway } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import type { MikroORM } from '@mikro-orm/postgresql';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { GraphQLSchema } from 'graphql';
import type { Logger } from 'pino';
import { Redis } from 'ioredis';
import { DEFAULT_DASHBOARD_SETTINGS, DEFAULT_REQUEST_BOUNDS, type DashboardSettings, type RateLimits, type RequestBounds, type RestBases } from './edge-settings.js';
import { EdgeConnections } from './edge-connections.js';
import { DEFAULT_MAX_ACTIVE_KEYS_PER_ACCOUNT } from '../identity/identity.service.js';
import { createRestBridge, openApiPath } from '../rest-bridge/index.js';
import { membershipOpenApi, tracerouteOpenApi, type TraceExportLimits } from '../rest-bridge/openapi-interfaces.js';
import { financeReportCsv } from '../rest-bridge/finance-report-csv.js';
import { documentRest } from '../rest-bridge/document-upload.js';
import { membershipExpanded, membershipHandwrittenRoutes, membershipHidden, membershipRoutes } from '../rest-bridge/membership.routes.js';
import { tracerouteExpanded, tracerouteHandwrittenRoutes, tracerouteRestName, tracerouteRoutes, tracerouteStreamRoutes } from '../rest-bridge/traceroute.routes.js';
import { requestLogging } from '../core/request-log.js';
import { apolloMiddleware } from '../core/apollo-http.js';
import {
  membershipErrorFormat,
  openAIErrorFormat,
  sendApiError,
  tracerouteErrorFormat,
  type ErrorFormat,
} from '../rest-bridge/errors.js';
import { listen, type RunningService } from '../core/listen.js';
import { clientExtensions, errorMasking } from '../core/error-masking.js';
import { DEFAULT_ABUSE_LIMITS, graphqlArmor } from './abuse-limits.js';
import type { EdgeContext } from '../core/edge-context.js';
import { graphqlStatusOf, idempotency, respondWith } from './idempotency.js';
import { IdempotencyOwner } from './idempotency-owner.js';
import { operationResolutionPlugin } from './operation-resolution.plugin.js';
import { edgeGuard } from './edge-guard.js';
import {
  graphqlErrorFormat,
  graphqlInterface,
  keylessInferenceInterface,
  membershipInterface,
  serviceIInterface,
  serviceTInterface,
  tracerouteInterface,
} from './edge-interfaces.js';
import { RateLimiter } from './rate-limit/rate-limiter.js';
import { SubscriptionExecutor } from './subscriptions/subscription-executor.js';
import { SupergraphPlanning } from './supergraph-planning.js';
import { QueryPassthrough } from './query-passthrough.js';
import { serveWebSockets, type SubscriptionLimits } from './subscriptions/websocket-server.js';
import { healthHandler } from './health.js';
import { dashboardStatic } from './dashboard-static.js';
import { SigningDataSource } from './signing-data-source.js';
import { KeyUseRecorder } from '../identity/key-use-recorder.js';
import { KeyCache } from '../identity/key-cache.js';
import { relayStream } from './stream-relay.js';
import { callInference, relayAgent, relayInference } from './inference-relay.js';
import { dashboardApi } from './dashboard-api/dashboard.routes.js';
import { DashboardService } from './dashboard-api/dashboard.service.js';
import { PathTemplates } from './dashboard-api/path-template.js';
import { SessionAuthenticator } from './dashboard-api/session-auth.js';
import { SignInLimiter } from './dashboard-api/sign-in-limiter.js';
import { UsageRecorder } from './dashboard-api/usage-recorder.js';
import { internalKeyStoreRoutes } from './internal-key-store.routes.js';
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from '../core/database-unavailable.js';
import { graphqlDepthGuard } from './json-depth-guard.js';
import { DEFAULT_JSON_MAX_DEPTH } from '../core/json-depth.js';

export interface EdgeOptions {
  supergraphSdl: string;
  /** Where each subgraph's /graphql answers, by subgraph name. */
  subgraphUrls: Record<string, string>;
  internalSecret: string;
  identityOrm: MikroORM;
  logger: Logger;
  introspection: boolean;
  restBases: RestBases;
  rateLimits: RateLimits;
  /** Shared rate-limit counters; in-process counting when unset. */
  redisUrl?: string;
  /** Counts nothing and sends no X-RateLimit headers: for benchmarks that measure the limiter. */
  limitsOff?: boolean;
  subscriptionLimits: SubscriptionLimits;
  /**
   * The inference subgraph's HTTP routes when it runs in this process: the inference mounts call
   * them directly; without them the mounts relay to the subgraph's URL.
   */
  localInference?: express.RequestHandler;
  /** The document upload cap the edge applies before relaying (DOCUMENT_MAX_UPLOAD_BYTES). */
  /** The document upload cap (DOCUMENT_MAX_UPLOAD_BYTES): the platform's configuration, so the edge holds no subgraph default. */
  documents: { maxUploadBytes: number };
  /** The traceroute export's bounds, for its OpenAPI document (the subgraph owns them; the platform passes them on). */
  tracerouteExport: TraceExportLimits;
  /** How long a looked-up key is reused (KEY_CACHE_SECONDS); 0 reads the key store on every request. Default 30. */
  keyCacheSeconds?: number;
  /** Whether identical in-flight subgraph queries share one fetch (SUBGRAPH_QUERY_DEDUPLICATION); default true. */
  subgraphQueryDeduplication?: boolean;
  /** Where the dashboard is served (DASHBOARD_PATH); default /dashboard. */
  dashboardPath?: string;
  /** The dashboard's session lifetimes and sign-in limits (its API is served under `<dashboardPath>/api`). */
  dashboard?: Omit<DashboardSettings, 'path'>;
  /** The key cap the dashboard shows (MAX_ACTIVE_KEYS_PER_ACCOUNT). */
  maxActiveKeysPerAccount?: number;
  /** How deeply request JSON may nest on every interface (JSON_MAX_DEPTH); default 64. */
  jsonMaxDepth?: number;
  /** How long a request may take to arrive, and how slow its body may be (EDGE_*_TIMEOUT_MS, EDGE_BODY_MIN_BYTES_PER_SEC). */
  requestBounds?: RequestBounds;
}

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

/**
 * Builds the public edge: the Apollo gateway at /graphql over the committed supergraph, the REST
 * bridge, and /health, all behind one authentication step. Nothing listens until `listen`.
 */
export async function createEdge(options: EdgeOptions): Promise<Edge> {
  const app = express();
  app.disable('x-powered-by');
  const jsonMaxDepth = options.jsonMaxDepth ?? DEFAULT_JSON_MAX_DEPTH;
  const requestBounds = options.requestBounds ?? DEFAULT_REQUEST_BOUNDS;
  const httpServer = http.createServer(EdgeConnections.serverOptions(requestBounds), app);
  // A request that arrives too slowly is answered 408 in its interface's error body (the dashboard
  // API's own; GraphQL's where the path is unknown or has none).
  const connections = new EdgeConnections(httpServer, requestBounds, (path, requestId, message) => {
    const error = { status: 408, code: 'request_timeout', message };
    if (path !== undefined && under(path, `${options.dashboardPath ?? DEFAULT_DASHBOARD_SETTINGS.path}/api`)) return JSON.stringify({ error: { code: error.code, message } });
    return JSON.stringify(((path !== undefined && formatFor(path)) || graphqlErrorFormat)(error, requestId ?? ''));
  });

  // One signing data source per subgraph, used by queries and by subscription events alike.
  const dataSources = Object.fromEntries(
    Object.entries(options.subgraphUrls).map(([name, url]) => [name, new SigningDataSource(url, options.internalSecret, name, options.logger, options.subgraphQueryDeduplication ?? true)]),
  );
  const gateway = new ApolloGateway({
    supergraphSdl: options.supergraphSdl,
    buildService: ({ name }) => {
      const dataSource = dataSources[name];
      if (!dataSource) throw new Error(`No URL configured for subgraph "${name}"`);
      return dataSource;
    },
    logger: options.logger,
    // Off whatever NODE_ENV says (Apollo turns it on outside production): with it, any client
    // sending Apollo-Query-Plan-Experimental got the plan, with subgraph names and the internal
    // operations, in the response's extensions.
    __exposeQueryPlanExperimental: false,
  });
  // One planner beside the gateway's, for subscriptions and for single-fetch operations.
  const planning = new SupergraphPlanning(options.supergraphSdl);
  let apiSchema: GraphQLSchema | undefined;
  gateway.onSchemaLoadOrUpdate(({ apiSchema: loaded }) => {
    apiSchema = loaded;
  });
  // Depth, cost, aliases, tokens and directives capped; field suggestions hidden unless introspection is on.
  const armor = graphqlArmor({ ...DEFAULT_ABUSE_LIMITS, maxValueDepth: jsonMaxDepth, blockFieldSuggestions: !options.introspection });
  // The gateway's own failures (a subgraph unreachable, a plan that failed) are masked like a
  // subgraph's; errors relayed from subgraphs arrive masked already and pass as they are.
  const masking = errorMasking<EdgeContext>({ logger: options.logger, requestIdOf: (context) => context.requestId });
  const apollo = new ApolloServer<EdgeContext>({
    gateway: new QueryPassthrough(planning, dataSources).wrap(gateway),
    introspection: options.introspection,
    includeStacktraceInErrorResponses: false,
    formatError: (formatted, error) => {
      const masked = masking.formatError(formatted, error);
      return { ...masked, extensions: clientExtensions(masked.extensions) };
    },
    validationRules: armor.validationRules,
    parseOptions: armor.parseOptions,
    allowBatchedHttpRequests: armor.allowBatchedHttpRequests,
    plugins: [ApolloServerPluginDrainHttpServer({ httpServer }), operationResolutionPlugin, masking.plugin, ...armor.plugins],
    logger: options.logger,
    // The process stops the server itself, in order (service-entry.ts). Apollo's own SIGINT/SIGTERM
    // stop would race it, and a second stop() during the first never returns (Apollo 5).
    stopOnTerminationSignals: false,
  });
  await apollo.start();
  if (!apiSchema) throw new Error('The gateway loaded no schema from the supergraph');

  app.use(
    requestLogging(options.logger, {
      genReqId: (req, res) => {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : `req_${randomUUID()}`;
        res.setHeader('x-request-id', id);
        return id;
      },
      ignore: (req) => req.url === '/health',
    }),
  );
  const redis = options.redisUrl ? await connectRedis(options.redisUrl, options.logger) : undefined;
  // Marks this process's Idempotency-Key claims as alive while it runs.
  const idempotencyOwner = new IdempotencyOwner(options.identityOrm, options.logger.child({ part: 'idempotency' }));
  const limiter = new RateLimiter(redis);
  // One cache per edge process, told of every key change by the key store's notices (key-cache.ts).
  const keyCache = new KeyCache({ ttlMs: (options.keyCacheSeconds ?? 30) * 1000, logger: options.logger.child({ part: 'key-cache' }) });
  await keyCache.listen(String(options.identityOrm.config.get('clientUrl')));
  // "Last used" under Settings, API Keys: written once a minute per key, off the request's path.
  const keyUse = new KeyUseRecorder(options.identityOrm, options.logger.child({ part: 'key-use' }));
  const dashboard = { ...DEFAULT_DASHBOARD_SETTINGS, ...options.dashboard, path: options.dashboardPath ?? DEFAULT_DASHBOARD_SETTINGS.path };
  // The dashboard's sessions: its own API, and an identity on /graphql besides keys.
  const sessions = new SessionAuthenticator(options.identityOrm, { idleMs: dashboard.sessionIdleMs, maxMs: dashboard.sessionMaxMs });
  const guard = (edge: Parameters<typeof edgeGuard>[2], publicPaths: string[] = [], withSessions?: SessionAuthenticator) =>
    edgeGuard(options.identityOrm, limiter, options.limitsOff ? { ...edge, windows: () => [] } : edge, publicPaths, keyCache, withSessions, keyUse);
  const { restBases: bases, rateLimits } = options;
  // Which interface's error body a failure at `path` is answered in.
  const formats: [string, ErrorFormat][] = [
    [bases.membership, membershipErrorFormat],
    [bases.traceroute, tracerouteErrorFormat],
    [bases.inferenceText, openAIErrorFormat],
    [bases.inferenceImage, openAIErrorFormat],
    [bases.inferenceProxy, openAIErrorFormat],
    [bases.inferenceGateway, openAIErrorFormat],
  ];
  const formatFor = (path: string) => formats.find(([base]) => under(path, base))?.[1];

  // Membership REST and /graphql requests of live and test principals, counted for the dashboard's usage page.
  const usage = new UsageRecorder(options.identityOrm, {
    restBase: bases.membership,
    templates: new PathTemplates(bases.membership, Object.values(membershipRoutes).map((route) => route.path)),
    logger: options.logger.child({ part: 'usage' }),
  });
  app.use(usage.middleware());
  // /graphql first: a GraphQL request walks no other route's layers (health, the key store's
  // internal routes, the dashboard, the REST mounts), none of which serves a path under it.
  app.use(
    '/graphql',
    guard(graphqlInterface(rateLimits), [], sessions),
    idempotency(options.identityOrm, { respond: respondWith(graphqlErrorFormat), statusOf: graphqlStatusOf, owner: idempotencyOwner }),
    express.json({ limit: '1mb' }),
    graphqlDepthGuard(jsonMaxDepth),
    apolloMiddleware(apollo, {
      context: async ({ req }) => ({ principal: req.principal!, requestId: String(req.id), idempotency: req.idempotency }),
    }),
  );

  app.get('/health', healthHandler(options.identityOrm, options.subgraphUrls));
  app.use(internalKeyStoreRoutes({ identityOrm: options.identityOrm, internalSecret: options.internalSecret, maxActiveKeysPerAccount: options.maxActiveKeysPerAccount }));
  // The dashboard's files; its API under the same path is mounted with the routes below.
  app.use(dashboardStatic({ basePath: options.dashboardPath ?? '/dashboard', restBases: options.restBases }));

  app.use(
    `${dashboard.path}/api`,
    dashboardApi(
      new DashboardService(options.identityOrm, sessions, new SignInLimiter(limiter, { perAddress: dashboard.signInPerAddress, failuresPerEmail: dashboard.signInFailuresPerEmail }), usage, {
        rateLimits,
        maxActiveKeysPerAccount: options.maxActiveKeysPerAccount ?? DEFAULT_MAX_ACTIVE_KEYS_PER_ACCOUNT,
      }, limiter),
      { dashboardPath: dashboard.path, sessionMaxMs: dashboard.sessionMaxMs, jsonMaxDepth },
    ),
  );

  // REST mounts are matched by prefix without app.use(path): Express would strip the prefix, and
  // sofa routes on the full path. Sofa reads the raw body itself, so no body parser runs first.
  const mount = (base: string, ...handlers: express.RequestHandler[]) =>
    app.use((req, res, next) => (under(req.path, base) ? chain(handlers, req, res, next) : next()));

  mount(
    bases.membership,
    guard(membershipInterface(rateLimits), [openApiPath(bases.membership)]),
    // Document bytes stream to the membership subgraph: before the Idempotency-Key step, which buffers bodies.
    documentRest({
      basePath: bases.membership,
      apollo,
      subgraphUrl: options.subgraphUrls.membership,
      internalSecret: options.internalSecret,
      maxUploadBytes: options.documents.maxUploadBytes,
      jsonMaxDepth,
    }),
    idempotency(options.identityOrm, { respond: respondWith(membershipErrorFormat), owner: idempotencyOwner }),
    // GET /finance/reports?format=csv: the same report as CSV; sofa answers JSON only.
    financeReportCsv({ basePath: bases.membership, apollo }),
    createRestBridge({
      basePath: bases.membership,
      schema: apiSchema,
      apollo,
      routes: membershipRoutes,
      handwritten: membershipHandwrittenRoutes,
      expanded: membershipExpanded,
      hidden: membershipHidden,
      title: 'Membership Management Platform API',
      description: 'Members, events, finance, documents, chat, jobs and tenders. Served from the federated graph.',
      errorFormat: membershipErrorFormat,
      openApi: membershipOpenApi,
      jsonMaxDepth,
    }),
  );
  // The export streams PostgreSQL's COPY from the traceroute subgraph (sofa cannot stream).
  const traceExport = relayStream({
    mount: bases.traceroute,
    path: tracerouteStreamRoutes.export.path,
    subgraphUrl: options.subgraphUrls[tracerouteStreamRoutes.export.subgraph],
    internalSecret: options.internalSecret,
    format: tracerouteErrorFormat,
  });
  mount(
    bases.traceroute,
    guard(tracerouteInterface(rateLimits), [openApiPath(bases.traceroute)]),
    traceExport,
    createRestBridge({
      basePath: bases.traceroute,
      schema: apiSchema,
      apollo,
      routes: tracerouteRoutes,
      expanded: tracerouteExpanded,
      restName: tracerouteRestName,
      handwritten: tracerouteHandwrittenRoutes,
      // The key may come as a query parameter (X-API-Key's alternative in the spec).
      interfaceQuery: ['api_key'],
      title: 'Traceroute Public API',
      description: 'Traceroute measurements of the national internet observatory.',
      errorFormat: tracerouteErrorFormat,
      openApi: tracerouteOpenApi(options.tracerouteExport),
      jsonMaxDepth,
    }),
  );
  // The inference interfaces are the inference subgraph's OpenAI-compatible HTTP routes: the edge
  // authenticates (keyed mounts), counts, and relays each mount to its interface there.
  const inferenceAgent = relayAgent();
  const relay = (base: string, target: string, keyless: boolean) =>
    options.localInference
      ? callInference({ mount: base, target, keyless, routes: options.localInference })
      : relayInference({ mount: base, target, subgraphUrl: options.subgraphUrls.inference, internalSecret: options.internalSecret, keyless, dispatcher: inferenceAgent });
  mount(bases.inferenceText, guard(serviceTInterface(rateLimits)), relay(bases.inferenceText, '/openai/serviceT', false));
  mount(bases.inferenceImage, guard(serviceIInterface(rateLimits, bases.inferenceImage)), relay(bases.inferenceImage, '/openai/serviceI', false));
  // Keyless interfaces: a client's Authorization header is ignored, and dropped so nothing behind relies on it.
  mount(bases.inferenceProxy, dropAuthorization, guard(keylessInferenceInterface(rateLimits, 'inference-proxy')), relay(bases.inferenceProxy, '/openai/proxy', true));
  mount(bases.inferenceGateway, dropAuthorization, guard(keylessInferenceInterface(rateLimits, 'inference-gateway')), relay(bases.inferenceGateway, '/openai/gateway', true));

  // graphql-ws on the same path: queries and mutations go to the Apollo server, subscriptions
  // are planned and completed across subgraphs per event.
  const websockets = serveWebSockets({
    httpServer,
    apollo,
    executor: new SubscriptionExecutor(
      planning,
      dataSources,
      options.logger,
    ),
    identityOrm: options.identityOrm,
    keyCache,
    sessions,
    limiter,
    edge: graphqlInterface(rateLimits),
    subgraphUrls: options.subgraphUrls,
    internalSecret: options.internalSecret,
    validationRules: armor.validationRules,
    maxTokens: armor.parseOptions.maxTokens ?? DEFAULT_ABUSE_LIMITS.maxTokens,
    jsonMaxDepth,
    limits: options.subscriptionLimits,
    logger: options.logger,
  });

  app.use((error: Error & { status?: number; type?: string }, req: Request, res: Response, _next: NextFunction) => {
    // The key store's database down or restarting: worth a retry (503, Retry-After), not a 500.
    if (isDatabaseUnavailable(error)) {
      req.log.warn({ err: error }, 'the database is unavailable');
      sendApiError(res, formatFor(req.path) ?? graphqlErrorFormat, { status: 503, code: 'service_unavailable', message: DATABASE_UNAVAILABLE_MESSAGE }, String(req.id));
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
    sendApiError(res, formatFor(req.path) ?? graphqlErrorFormat, apiError, String(req.id));
  });

  return {
    app,
    httpServer,
    apollo,
    apiSchema,
    openSockets: websockets.openSockets,
    stop: async () => {
      // Keep-alive connections end with the responses under way, so that no client sends its
      // next request to a process on its way out.
      connections.drain();
      // Sockets first (closed with 1001, going away), then the HTTP drain.
      await websockets.dispose();
      await apollo.stop();
      await redis?.quit();
      await inferenceAgent.close();
      await usage.close();
      await keyCache.close();
      await keyUse.flush();
      await idempotencyOwner.close();
    },
  };
}

function under(path: string, base: string): boolean {
  return path === base || path.startsWith(`${base}/`);
}

function chain(handlers: express.RequestHandler[], req: Request, res: Response, next: NextFunction): void {
  const [first, ...rest] = handlers;
  if (!first) return next();
  first(req, res, (error?: unknown) => (error ? next(error) : chain(rest, req, res, next)));
}

function dropAuthorization(req: Request, _res: Response, next: NextFunction): void {
  delete req.headers.authorization;
  next();
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
