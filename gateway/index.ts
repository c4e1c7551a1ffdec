import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { ApolloGateway } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { expressMiddleware } from '@as-integrations/express5';
import type { MikroORM } from '@mikro-orm/postgresql';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { GraphQLFormattedError, GraphQLSchema } from 'graphql';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { createRestBridge } from '../rest-bridge/index.js';
import { membershipExpanded, membershipRoutes } from '../rest-bridge/membership.routes.js';
import { restError } from '../rest-bridge/errors.js';
import { listen, type RunningService } from '../subgraphs/shared/server.js';
import { bearerAuth, type RejectionResponder } from './edge-auth.js';
import type { EdgeContext } from './edge-context.js';
import { healthHandler } from './health.js';
import { SigningDataSource } from './signing-data-source.js';

export interface EdgeOptions {
  supergraphSdl: string;
  /** Where each subgraph's /graphql answers, by subgraph name. */
  subgraphUrls: Record<string, string>;
  internalSecret: string;
  identityOrm: MikroORM;
  logger: Logger;
  introspection: boolean;
  restBases: { membership: string };
}

export interface Edge {
  app: express.Express;
  httpServer: http.Server;
  apollo: ApolloServer<EdgeContext>;
  apiSchema: GraphQLSchema;
  stop(): Promise<void>;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Keeps what a client may see of an error: message, path, and the code, reason and param. */
function withoutInternals(formatted: GraphQLFormattedError): GraphQLFormattedError {
  const { code, reason, param } = formatted.extensions ?? {};
  const extensions = Object.fromEntries(
    Object.entries({ code, reason, param }).filter(([, value]) => value !== undefined),
  );
  return { ...formatted, extensions };
}

/** GraphQL clients get the refusal as a GraphQL error body with the HTTP status. */
const rejectGraphQL: RejectionResponder = (_req, res, rejection) => {
  res.status(rejection.status).json({
    errors: [
      {
        message: rejection.message,
        extensions: { code: rejection.status === 401 ? 'UNAUTHENTICATED' : 'FORBIDDEN', reason: rejection.code },
      },
    ],
  });
};

const rejectRest: RejectionResponder = (req, res, rejection) => {
  res.status(rejection.status).json(restError(rejection.status, rejection, String(req.id)));
};

/**
 * Builds the public edge: the Apollo gateway at /graphql over the committed supergraph, the REST
 * bridge, and /health, all behind one authentication step. Nothing listens until `listen`.
 */
export async function createEdge(options: EdgeOptions): Promise<Edge> {
  const app = express();
  app.disable('x-powered-by');
  const httpServer = http.createServer(app);

  const gateway = new ApolloGateway({
    supergraphSdl: options.supergraphSdl,
    buildService: ({ name }) => {
      const url = options.subgraphUrls[name];
      if (!url) throw new Error(`No URL configured for subgraph "${name}"`);
      return new SigningDataSource(url, options.internalSecret);
    },
    logger: options.logger,
  });
  let apiSchema: GraphQLSchema | undefined;
  gateway.onSchemaLoadOrUpdate(({ apiSchema: loaded }) => {
    apiSchema = loaded;
  });
  const apollo = new ApolloServer<EdgeContext>({
    gateway,
    introspection: options.introspection,
    includeStacktraceInErrorResponses: false,
    formatError: withoutInternals,
    plugins: [ApolloServerPluginDrainHttpServer({ httpServer })],
    logger: options.logger,
  });
  await apollo.start();
  if (!apiSchema) throw new Error('The gateway loaded no schema from the supergraph');

  app.use(
    pinoHttp({
      logger: options.logger,
      genReqId: (req, res) => {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : `req_${randomUUID()}`;
        res.setHeader('x-request-id', id);
        return id;
      },
      autoLogging: { ignore: (req) => req.url === '/health' },
    }),
  );
  app.get('/health', healthHandler(options.identityOrm, options.subgraphUrls));

  const membershipBase = options.restBases.membership;
  const membershipBridge = createRestBridge({
    basePath: membershipBase,
    schema: apiSchema,
    apollo,
    routes: membershipRoutes,
    expanded: membershipExpanded,
    title: 'Membership Management Platform API',
    description: 'Members, events, finance, documents, chat, jobs and tenders. Served from the federated graph.',
  });
  const membershipAuth = bearerAuth(options.identityOrm, { kinds: ['live', 'test'], reject: rejectRest });
  // Mounted without a path: Express would strip the prefix, and sofa routes on the full path.
  // Sofa reads the raw body itself, so no body parser runs before it.
  app.use((req, res, next) => {
    if (req.path !== membershipBase && !req.path.startsWith(`${membershipBase}/`)) return next();
    membershipAuth(req, res, (error?: unknown) => (error ? next(error) : membershipBridge(req, res, next)));
  });

  app.use(
    '/graphql',
    bearerAuth(options.identityOrm, { kinds: ['live', 'test', 'text', 'image', 'traceroute'], reject: rejectGraphQL }),
    express.json({ limit: '1mb' }),
    expressMiddleware(apollo, {
      context: async ({ req }) => ({ principal: req.principal!, requestId: String(req.id) }),
    }),
  );

  app.use((error: Error & { status?: number; type?: string }, req: Request, res: Response, _next: NextFunction) => {
    // Body-parser failures carry their status (400 bad JSON, 413 too large); anything else is ours.
    const status = error.status && error.status >= 400 && error.status < 500 ? error.status : 500;
    if (status === 500) req.log.error({ err: error }, 'request failed');
    const message = status === 500 ? 'An internal error occurred' : error.message;
    if (req.originalUrl.startsWith('/graphql')) {
      res.status(status).json({ errors: [{ message, extensions: { code: status === 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST' } }] });
    } else {
      res.status(status).json(restError(status, { code: status === 500 ? 'internal_error' : error.type ?? 'bad_request', message }, String(req.id)));
    }
  });

  return {
    app,
    httpServer,
    apollo,
    apiSchema,
    stop: () => apollo.stop(),
  };
}

/** Binds the edge to its public port. */
export async function listenEdge(edge: Edge, port: number, host: string): Promise<RunningService> {
  const bound = await listen(edge.httpServer, port, host, 'The gateway');
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return { name: 'gateway', port: bound, url: `http://${shown}:${bound}/graphql`, stop: edge.stop };
}
