import type { MikroORM } from '@mikro-orm/postgresql';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import type { Logger } from 'pino';
import type { NonEmptyArray } from './type-graphql.js';
import { migrate, openOrm, type OrmOptions } from './orm.js';
import { buildFederatedSchema } from './schema.js';
import type { SubgraphContext } from './context.js';
import { UnauthenticatedError, verifyPrincipal, type KeyKind, type Principal } from './principal.js';

/** A built subgraph: its schema, its ORM, and how to make a request's context. Nothing listens yet. */
export interface Subgraph<C extends SubgraphContext = SubgraphContext> {
  name: string;
  schema: GraphQLSchema;
  orm: MikroORM;
  /** Verifies the edge's signed principal header and forks an EntityManager for the request. */
  createContext(principalHeader: string | undefined): C;
  close(): Promise<void>;
}

/** The context factory every subgraph shares: no valid signature, no context. */
export function contextFactory<C extends SubgraphContext = SubgraphContext>(
  orm: MikroORM,
  internalSecret: string,
  extend: (base: SubgraphContext) => C = (base) => base as C,
  kinds?: readonly KeyKind[],
) {
  return (principalHeader: string | undefined): C => {
    let principal: Principal;
    try {
      principal = verifyPrincipal(principalHeader, internalSecret);
    } catch (error) {
      if (error instanceof UnauthenticatedError) {
        // Apollo Server answers a context failure with this status instead of 500.
        throw new GraphQLError(error.message, {
          extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } },
        });
      }
      throw error;
    }
    if (kinds && !kinds.includes(principal.kind)) {
      throw new GraphQLError(`A ${principal.kind} key has no access to this data`, {
        extensions: { code: 'FORBIDDEN', reason: 'wrong_key_kind', http: { status: 403 } },
      });
    }
    return extend({ principal, em: orm.em.fork(), loaders: new Map() });
  };
}

/** What each subgraph's own options add to the shared ones. */
export interface SubgraphOptions {
  databaseUrl: string;
  internalSecret: string;
  logger?: Logger;
  onQuery?: (sql: string) => void;
}

/** What defines a subgraph: its name, its ORM's entities and migrations, its resolvers. */
export interface SubgraphParts {
  name: string;
  orm: Pick<OrmOptions, 'schema' | 'entities' | 'migrations'>;
  resolvers: NonEmptyArray<Function>;
  references?: Parameters<typeof buildFederatedSchema>[1];
  /** Key kinds whose principals may use this subgraph; all when absent. */
  kinds?: readonly KeyKind[];
}

/** The subgraph's federated schema alone, with no database (for composition). */
export function buildPartsSchema(parts: SubgraphParts): Promise<GraphQLSchema> {
  return buildFederatedSchema({ resolvers: parts.resolvers }, parts.references);
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
  try {
    await migrate(orm, options.databaseUrl, parts.orm.schema);
    return {
      name: parts.name,
      schema: await buildPartsSchema(parts),
      orm,
      createContext: contextFactory<C>(orm, options.internalSecret, extendContext, parts.kinds),
      close: () => orm.close(),
    };
  } catch (error) {
    await orm.close();
    throw error;
  }
}
