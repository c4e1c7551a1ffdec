import type http from 'node:http';
import { ApolloGateway } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import type { GraphQLSchema } from 'graphql';
import type { Logger } from 'pino';
import type { EdgeContext } from '../../core/edge-context.js';
import { clientExtensions, errorMasking } from '../../core/error-masking.js';
import { DEFAULT_ABUSE_LIMITS, graphqlArmor, type ArmorOptions } from './abuse-limits.js';
import { operationResolutionPlugin } from './operation-resolution.plugin.js';
import type { PersistedQueryCache } from './persisted-query-cache.js';
import { QueryPassthrough } from './query-passthrough.js';
import { SigningDataSource } from './signing-data-source.js';
import { SupergraphPlanning } from './supergraph-planning.js';

/** The supergraph every interface's operations run on: GraphQL directly, REST through the bridge. */
export interface FederatedGraph {
  apollo: ApolloServer<EdgeContext>;
  apiSchema: GraphQLSchema;
  /** One planner beside the gateway's, for subscriptions and for single-fetch operations. */
  planning: SupergraphPlanning;
  /** One signing data source per subgraph, used by queries and by subscription events alike. */
  dataSources: Record<string, SigningDataSource>;
  armor: ArmorOptions;
  /** The executor's short way for single-fetch operations, which /graphql also takes before Apollo's pipeline. */
  passthrough: QueryPassthrough;
}

export interface FederatedGraphOptions {
  supergraphSdl: string;
  subgraphUrls: Record<string, string>;
  internalSecret: string;
  logger: Logger;
  introspection: boolean;
  subgraphQueryDeduplication?: boolean;
  jsonMaxDepth: number;
  httpServer: http.Server;
  /** Where automatic persisted queries are kept; Apollo's in-process cache when unset. */
  persistedQueries?: PersistedQueryCache;
}

/** Starts the Apollo gateway over the committed supergraph, with the edge's abuse limits and error masking. */
export async function startFederatedGraph(options: FederatedGraphOptions): Promise<FederatedGraph> {
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
  const planning = new SupergraphPlanning(options.supergraphSdl);
  let apiSchema: GraphQLSchema | undefined;
  gateway.onSchemaLoadOrUpdate(({ apiSchema: loaded }) => {
    apiSchema = loaded;
  });
  // Depth, cost, aliases, tokens and directives capped; field suggestions hidden unless introspection is on.
  const armor = graphqlArmor({ ...DEFAULT_ABUSE_LIMITS, maxValueDepth: options.jsonMaxDepth, blockFieldSuggestions: !options.introspection });
  // The gateway's own failures (a subgraph unreachable, a plan that failed) are masked like a
  // subgraph's; errors relayed from subgraphs arrive masked already and pass as they are.
  const passthrough = new QueryPassthrough(planning, dataSources);
  const masking = errorMasking<EdgeContext>({ logger: options.logger, requestIdOf: (context) => context.requestId });
  const apollo = new ApolloServer<EdgeContext>({
    gateway: passthrough.wrap(gateway),
    introspection: options.introspection,
    includeStacktraceInErrorResponses: false,
    formatError: (formatted, error) => {
      const masked = masking.formatError(formatted, error);
      return { ...masked, extensions: clientExtensions(masked.extensions) };
    },
    validationRules: armor.validationRules,
    parseOptions: armor.parseOptions,
    allowBatchedHttpRequests: armor.allowBatchedHttpRequests,
    // A day: a shared store (Redis) is not bounded by size the way Apollo's in-process LRU is, and
    // a client whose query expired sends it whole once more.
    ...(options.persistedQueries ? { persistedQueries: { cache: options.persistedQueries, ttl: 86_400 } } : {}),
    plugins: [ApolloServerPluginDrainHttpServer({ httpServer: options.httpServer }), operationResolutionPlugin, masking.plugin, ...armor.plugins],
    logger: options.logger,
    // The process stops the server itself, in order (service-entry.ts). Apollo's own SIGINT/SIGTERM
    // stop would race it, and a second stop() during the first never returns (Apollo 5).
    stopOnTerminationSignals: false,
  });
  await apollo.start();
  if (!apiSchema) throw new Error('The gateway loaded no schema from the supergraph');
  return { apollo, apiSchema, planning, dataSources, armor, passthrough };
}
