import express from 'express';
import { apolloMiddleware } from '../../../core/apollo-http.js';
import { graphqlStatusOf, idempotency, respondWith } from '../../idempotency/idempotency.js';
import { DEFAULT_ABUSE_LIMITS } from '../../federation/abuse-limits.js';
import type { PublishedInterface } from '../../published-interface.js';
import { graphqlErrorFormat } from './graphql.error-body.js';
import { graphqlInterface } from './graphql.keys.js';
import { graphqlDepthGuard } from './json-depth-guard.js';
import { graphqlBody } from './graphql-body.js';
import { acceptedOperations, contextFor } from './accepted-operations.js';
import { SubscriptionExecutor } from './subscriptions/subscription-executor.js';
import { serveWebSockets } from './subscriptions/websocket-server.js';
import { clientAddressOf, type TrustFunction } from '../../access/client-address.js';

/** The largest /graphql body (express.json's '1mb'). */
const GRAPHQL_BODY_LIMIT = 1024 * 1024;

/**
 * GraphQL over HTTP at /graphql (queries, mutations) and over websockets on the same path
 * (graphql-ws: queries and mutations go to the Apollo server, subscriptions are planned and
 * completed across subgraphs per event). Every key kind, and dashboard sessions.
 */
export const graphqlHttpAndWebsockets: PublishedInterface = {
  name: 'graphql',
  errorBodies: () => [['/graphql', graphqlErrorFormat]],
  mount(edge) {
    const { options, graph } = edge;
    const contextOf = (req: express.Request) => ({ principal: req.principal!, requestId: String(req.id), idempotency: req.idempotency });
    edge.mountPath(
      '/graphql',
      edge.guard(graphqlInterface(options.rateLimits), [], edge.sessions),
      idempotency(edge.identityOrm, { respond: respondWith(graphqlErrorFormat), statusOf: graphqlStatusOf, owner: edge.idempotencyOwner }),
      graphqlBody(GRAPHQL_BODY_LIMIT),
      graphqlDepthGuard(edge.jsonMaxDepth),
      acceptedOperations(graph.passthrough, contextOf, apolloMiddleware(edge.apollo, { context: async ({ req }) => contextFor(req, contextOf) })),
    );
    const websockets = serveWebSockets({
      httpServer: edge.httpServer,
      apollo: edge.apollo,
      executor: new SubscriptionExecutor(graph.planning, graph.dataSources, edge.logger),
      identityOrm: edge.identityOrm,
      keyCache: edge.keyCache,
      sessions: edge.sessions,
      limiter: edge.limiter,
      edge: graphqlInterface(options.rateLimits),
      subgraphUrls: options.subgraphUrls,
      internalSecret: options.internalSecret,
      validationRules: graph.armor.validationRules,
      maxTokens: graph.armor.parseOptions.maxTokens ?? DEFAULT_ABUSE_LIMITS.maxTokens,
      jsonMaxDepth: edge.jsonMaxDepth,
      limits: options.subscriptionLimits,
      logger: edge.logger,
      clientAddress: (request) => clientAddressOf(request, edge.app.get('trust proxy fn') as TrustFunction),
    });
    // Sockets close first (1001, going away), before the HTTP drain.
    return { stop: websockets.dispose, openSockets: websockets.openSockets };
  },
};
