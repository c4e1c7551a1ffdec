import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import express from 'express';
import type { Logger } from 'pino';
import type { SubgraphContext } from './context.js';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import { CLIENT_HEADER, PRINCIPAL_HEADER, type Principal } from '../../core/principal.js';
import { WrongKeyKindError } from './key-kinds.js';
import type { Subgraph } from './subgraph.js';
import { errorMasking } from '../../core/error-masking.js';
import { GraphQLError, type ExecutionArgs, type ExecutionResult, type FormattedExecutionResult, type GraphQLFormattedError } from 'graphql';
import { connectableHost } from '../../core/net.js';
import { listen, type RunningService } from '../../core/listen.js';
import { subscribeSharingEvents } from './shared-event-results.js';
import { batchWrites, deliverGrouped } from './grouped-delivery.js';
import { GROUPED_EVENTS_PARAM } from '../../core/grouped-events.js';
import { requestLogging } from '../../core/request-log.js';
import { apolloMiddleware } from '../../core/apollo-http.js';
import { idempotentMutations } from './idempotent-mutations.plugin.js';
import { jsonErrorHandlers } from './json-errors.js';
import { readinessOf, type ReadinessProbe } from '../../core/health/readiness.js';
import { metricsText } from '../../core/metrics/platform-metrics.js';
import { requestSpans, tracerOf, tracingOn } from '../../core/telemetry/tracing.js';
import { resolverSpans } from '../../core/telemetry/resolver-spans.js';
import { requestMetrics } from '../../core/metrics/request-metrics.js';

function toFormatted(error: GraphQLError | GraphQLFormattedError): GraphQLFormattedError {
  return error instanceof GraphQLError ? error.toJSON() : error;
}

/** Polled by supervisors and load balancers: no key, no request line. */
const PROBE_PATHS = new Set(['/health', '/livez', '/readyz']);

const FORWARDED_REQUEST_ID = /^[\w.:-]{1,160}$/;

/** The request id the edge put in a websocket operation's extensions, when it is one. */
function forwardedRequestId(extensions: Readonly<Record<string, unknown>> | null | undefined): string | undefined {
  const requestId = extensions?.requestId;
  return typeof requestId === 'string' && FORWARDED_REQUEST_ID.test(requestId) ? requestId : undefined;
}

/** Serves a subgraph at /graphql (and /livez, /readyz, /health) on `host` (loopback unless told otherwise). */
export async function serveSubgraph(
  subgraph: Subgraph,
  options: { port: number; host?: string; logger: Logger; readiness?: Record<string, ReadinessProbe> },
): Promise<RunningService> {
  const host = options.host ?? '127.0.0.1';
  const app = express();
  const httpServer = http.createServer(app);
  // Errors that are not the client's doing leave with a generic message and the request id.
  const masking = errorMasking<SubgraphContext>({ logger: options.logger, requestIdOf: (context) => context.requestId });
  const apollo = new ApolloServer<SubgraphContext>({
    schema: subgraph.schema,
    // Only the gateway talks to a subgraph, and it never needs the landing page.
    introspection: true,
    // Stack traces go to the log, never over the wire (the gateway would pass them on).
    includeStacktraceInErrorResponses: false,
    // No Apollo Studio here: inline traces would only add bytes to every response. No field sets
    // a cache hint and nothing reads one, so cache control, which hooks every field, is off too.
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      ApolloServerPluginInlineTraceDisabled(),
      ApolloServerPluginCacheControlDisabled(),
      masking.plugin,
      // A mutation with the edge's Idempotency-Key commits with the record of its answer.
      idempotentMutations({ schema: String(subgraph.orm.config.get('schema')), logger: options.logger }),
      // Root fields' spans when tracing is on (OTEL_EXPORTER_OTLP_ENDPOINT).
      ...(tracingOn() ? [resolverSpans(tracerOf(subgraph.name))] : []),
    ],
    formatError: masking.formatError,
    logger: options.logger,
    // The process stops the server itself, in order (service-entry.ts). Apollo's own SIGINT/SIGTERM
    // stop would race it, and a second stop() during the first never returns (Apollo 5).
    stopOnTerminationSignals: false,
  });
  await apollo.start();
  // A span per request, child of the edge's fetch span (its traceparent), when tracing is on.
  if (tracingOn()) app.use(requestSpans(tracerOf(subgraph.name)));
  app.use(
    // The edge's redaction and line: no credential reaches a subgraph's log either.
    requestLogging(options.logger, {
      // The gateway forwards its request id, so one client request can be followed across services.
      genReqId: (req) => (typeof req.headers['x-request-id'] === 'string' ? req.headers['x-request-id'] : randomUUID()),
      ignore: (req) => PROBE_PATHS.has(req.url ?? '') || req.url === '/metrics',
    }),
  );
  // /livez: the process answers. /readyz (and /health, kept for its users): the database and
  // whatever else the service was given to check (Redis with REDIS_URL).
  app.get('/livez', (_req, res) => void res.json({ status: 'ok', service: subgraph.name }));
  const readiness = async (req: express.Request, res: express.Response) => {
    const { ready, checks } = await readinessOf({ database: () => subgraph.orm.em.getConnection().execute('select 1'), ...options.readiness });
    if (!ready) req.log?.warn({ checks }, 'readiness: a dependency does not answer');
    // The drivers' words carry addresses: the log has them, the answer names the failing part only.
    const named = Object.fromEntries(Object.entries(checks).map(([name, result]) => [name, result === 'ok' ? result : 'unreachable']));
    res.status(ready ? 200 : 503).json({ status: ready ? 'ok' : 'unavailable', service: subgraph.name, checks: named });
  };
  app.get('/readyz', readiness);
  app.get('/health', readiness);
  // Prometheus scrapes the internal port: a subgraph's port is never the public one (SUBGRAPH_HOST).
  app.get('/metrics', (_req, res, next) => {
    metricsText().then(({ contentType, body }) => void res.type(contentType).send(body), next);
  });
  app.use(requestMetrics(subgraph.name, (path) => (path === '/graphql' ? 'graphql' : 'http')));
  if (subgraph.httpRoutes) {
    const routes = subgraph.httpRoutes;
    const keyless = subgraph.keylessPaths ?? [];
    app.use((req, res, next) => {
      if (req.path === '/graphql' || PROBE_PATHS.has(req.path) || req.path === '/metrics') return next();
      if (keyless.some((prefix) => req.path === prefix || req.path.startsWith(`${prefix}/`))) {
        try {
          req.clientAddress = subgraph.verifyClient(req.header(CLIENT_HEADER));
        } catch (error) {
          res.status(401).json({ errors: [{ message: (error as Error).message, extensions: { code: 'UNAUTHENTICATED' } }] });
          return;
        }
        return routes(req, res, next);
      }
      let principal: Principal;
      try {
        principal = subgraph.verify(req.header(PRINCIPAL_HEADER));
      } catch (error) {
        res.status(401).json({ errors: [{ message: (error as Error).message, extensions: { code: 'UNAUTHENTICATED' } }] });
        return;
      }
      if (!subgraph.servesKinds.includes(principal.kind)) {
        const refused = new WrongKeyKindError(principal.kind, subgraph.name, subgraph.servesKinds);
        res.status(403).json({ errors: [{ message: refused.message, extensions: refused.extensions }] });
        return;
      }
      req.principal = principal;
      routes(req, res, next);
    });
  }
  app.use(
    '/graphql',
    express.json({ limit: '1mb' }),
    apolloMiddleware(apollo, {
      context: async ({ req }) =>
        // `log` read when used: the request's child logger is made only for a resolver that logs.
        Object.defineProperty(Object.assign(subgraph.createContext(req.header(PRINCIPAL_HEADER)), { requestId: String(req.id) }), 'log', { get: () => req.log, enumerable: true }),
    }),
  );
  // JSON answers for unknown paths and failures: never Express's HTML pages.
  app.use(...jsonErrorHandlers(options.logger));
  // Subscriptions (and any operation) over graphql-ws on the same path. The gateway signs the
  // principal into connectionParams; it is verified once, when the socket opens.
  const wsServer = new WebSocketServer({ server: httpServer, path: '/graphql' });
  const principals = new WeakMap<object, Principal>();
  /** Sockets whose client asked for grouped event frames (the edge: core/grouped-events.ts). */
  const grouped = new WeakSet<object>();
  /** Each operation's socket and id, by its context object: `subscribe` receives only the execution's arguments. */
  const operations = new WeakMap<object, { socket: WebSocket; id: string }>();
  /** What an event's result may show the edge: internal errors masked under the operation's request id. */
  const masked = (args: { contextValue?: unknown }, result: ExecutionResult): ExecutionResult | FormattedExecutionResult => {
    if (!result.errors) return result;
    const requestId = (args.contextValue as SubgraphContext).requestId;
    return { ...result, errors: result.errors.map((error) => masking.formatError(toFormatted(error), error, requestId)) };
  };
  const ws = useServer(
    {
      schema: subgraph.schema,
      subscribe: async (args: ExecutionArgs) => {
        const result = await subscribeSharingEvents(args);
        const operation = args.contextValue ? operations.get(args.contextValue as object) : undefined;
        if (!operation || !grouped.has(operation.socket) || !(Symbol.asyncIterator in result)) return result;
        return deliverGrouped(result, operation.socket, operation.id, (event) => masked(args, event));
      },
      onConnect: (ctx) => {
        try {
          principals.set(ctx.extra.socket, subgraph.verify(ctx.connectionParams?.[PRINCIPAL_HEADER] as string | undefined));
          if (ctx.connectionParams?.[GROUPED_EVENTS_PARAM] === true) grouped.add(ctx.extra.socket);
          return true;
        } catch {
          ctx.extra.socket.close(4401, 'Unauthorized: this service is reached only through the platform edge');
          return false;
        }
      },
      // The edge sends its request id for the operation in the payload's extensions, as it sends
      // X-Request-Id over HTTP: an event's internal error is logged here and answered under it.
      context: (ctx, id, payload) => {
        const context = Object.assign(subgraph.contextFor(principals.get(ctx.extra.socket)!), { requestId: forwardedRequestId(payload.extensions) ?? `req_${randomUUID()}` });
        operations.set(context, { socket: ctx.extra.socket, id });
        return context;
      },
      // Events carry errors too; they leave masked like those of HTTP responses.
      onNext: (ctx, _id, _payload, args, result) => {
        batchWrites(ctx.extra.socket);
        return masked(args, result);
      },
    },
    wsServer,
  );

  const port = await listen(httpServer, options.port, host, `The ${subgraph.name} subgraph`);
  return {
    name: subgraph.name,
    port,
    url: `http://${connectableHost(host)}:${port}/graphql`,
    stop: async () => {
      await ws.dispose();
      await apollo.stop();
    },
  };
}
