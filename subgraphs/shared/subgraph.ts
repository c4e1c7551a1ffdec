import type { MikroORM } from '@mikro-orm/postgresql';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { NonEmptyArray } from './type-graphql.js';
import { migrate, openOrm, type OrmOptions } from '../../core/orm.js';
import { createPlatformPubSub, type PlatformPubSub } from './pubsub.js';
import { buildFederatedSchema } from './schema.js';
import type { SubgraphContext } from './context.js';
import { enforceKeyKinds } from './key-kinds.js';
import { enforceMutationRoles } from './mutation-roles.js';
import { UnauthenticatedError, verifyClient, verifyPrincipal, type KeyKind, type Principal } from '../../core/principal.js';

/** A built subgraph: its schema, its ORM, and how to make a request's context. Nothing listens yet. */
export interface Subgraph<C extends SubgraphContext = SubgraphContext> {
  name: string;
  schema: GraphQLSchema;
  /** The key kinds whose principals its root fields (and plain HTTP routes) serve. */
  servesKinds: readonly KeyKind[];
  orm: MikroORM;
  pubsub: PlatformPubSub;
  /** Verifies the edge's signed principal header and forks an EntityManager for the request. */
  createContext(principalHeader: string | undefined): C;
  /** Verifies a signed principal header (websocket connections do this once, when they open). */
  verify(principalHeader: string | undefined): Principal;
  /** Verifies a keyless caller's signed header (CLIENT_HEADER) and returns the client address in it. */
  verifyClient(clientHeader: string | undefined): string;
  /** A request's context for an already verified principal. */
  contextFor(principal: Principal): C;
  /**
   * Plain HTTP routes beside /graphql, for what GraphQL cannot carry (a streamed export). They
   * are reached only through the edge: the server checks the signed principal first.
   */
  httpRoutes?: RequestHandler;
  /**
   * Path prefixes of `httpRoutes` served without a key (the inference proxy and gateway): there the
   * edge signs the client's address (CLIENT_HEADER) instead of a principal.
   */
  keylessPaths?: readonly string[];
  close(): Promise<void>;
}

/** A principal without a valid signature: Apollo Server answers 401 (the status in `http`). */
function unauthenticated(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } } });
}

/**
 * The context factories every subgraph shares: from a signed header (HTTP; no valid signature,
 * no context) or from a principal already verified when a websocket connected.
 */
export function contextFactory<C extends SubgraphContext = SubgraphContext>(
  orm: MikroORM,
  internalSecret: string,
  pubsub: PlatformPubSub,
  extend: (base: SubgraphContext) => C = (base) => base as C,
) {
  // Which key kinds may use what is checked per root field (key-kinds.ts), not here: the
  // gateway's entity lookups must pass for every kind whose root field led to them.
  const contextFor = (principal: Principal): C => extend({ principal, em: orm.em.fork(), loaders: new Map(), pubsub });
  const verify = (principalHeader: string | undefined): Principal => {
    try {
      return verifyPrincipal(principalHeader, internalSecret);
    } catch (error) {
      if (error instanceof UnauthenticatedError) throw unauthenticated(error.message);
      throw error;
    }
  };
  const verifyClientHeader = (clientHeader: string | undefined): string => {
    try {
      return verifyClient(clientHeader, internalSecret);
    } catch (error) {
      if (error instanceof UnauthenticatedError) throw unauthenticated(error.message);
      throw error;
    }
  };
  return {
    verify,
    verifyClient: verifyClientHeader,
    contextFor,
    createContext: (principalHeader: string | undefined): C => contextFor(verify(principalHeader)),
  };
}

/** What each subgraph's own options add to the shared ones. */
export interface SubgraphOptions {
  databaseUrl: string;
  internalSecret: string;
  logger?: Logger;
  onQuery?: (sql: string) => void;
  /** Shared by the process's subgraphs (Redis-backed with REDIS_URL); one of its own when absent. */
  pubsub?: PlatformPubSub;
}

/** What defines a subgraph: its name, its ORM's entities and migrations, its resolvers. */
export interface SubgraphParts {
  name: string;
  orm: Pick<OrmOptions, 'schema' | 'entities' | 'migrations'>;
  resolvers: NonEmptyArray<Function>;
  references?: Parameters<typeof buildFederatedSchema>[1];
  /** Entity types no field of this subgraph returns, which it still resolves by reference for another's @requires. */
  orphanedTypes?: Function[];
  /**
   * The key kinds this subgraph serves: every root Query, Mutation and Subscription field
   * refuses any other kind with FORBIDDEN, whatever the edge let through.
   */
  servesKinds: readonly KeyKind[];
  /** Root fields (`Mutation.qualifyVendor`) served to other kinds than `servesKinds`, e.g. one admin-only operation. */
  kindsByField?: Readonly<Record<string, readonly KeyKind[]>>;
}

/**
 * The subgraph's federated schema alone, with no database (for composition), its root fields
 * guarded by key kind and its mutations by dashboard role. The role is checked first: a viewer
 * is told it changes nothing, whichever kind it acts as.
 */
export async function buildPartsSchema(parts: SubgraphParts): Promise<GraphQLSchema> {
  const schema = await buildFederatedSchema({ resolvers: parts.resolvers, ...(parts.orphanedTypes ? { orphanedTypes: parts.orphanedTypes } : {}) }, parts.references);
  return enforceMutationRoles(enforceKeyKinds(schema, parts.name, parts.servesKinds, parts.kindsByField));
}

/**
 * Opens a subgraph's ORM on its own schema, runs its migrations, and builds its federated
 * schema. Every subgraph's index.ts is this call with its own parts.
 */
export async function createSubgraph<C extends SubgraphContext = SubgraphContext>(
  parts: SubgraphParts,
  options: SubgraphOptions,
  extendContext?: (base: SubgraphContext) => C,
): Promise<Subgraph<C>> {
  const orm = await openOrm({
    clientUrl: options.databaseUrl,
    logger: options.logger,
    onQuery: options.onQuery,
    ...parts.orm,
  });
  const pubsub = options.pubsub ?? createPlatformPubSub();
  const closeAll = async () => {
    await orm.close();
    if (!options.pubsub) await pubsub.close();
  };
  try {
    await migrate(orm, options.databaseUrl, parts.orm.schema);
    return {
      name: parts.name,
      schema: await buildPartsSchema(parts),
      servesKinds: parts.servesKinds,
      orm,
      pubsub,
      ...contextFactory<C>(orm, options.internalSecret, pubsub, extendContext),
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
