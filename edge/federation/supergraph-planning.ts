import { operationFromDocument, Supergraph } from '@apollo/federation-internals';
import { QueryPlanner, type FetchNode, type QueryPlan } from '@apollo/query-planner';
import { getOperationAST, Kind, parse, print, type DocumentNode, type GraphQLSchema } from 'graphql';

/**
 * The committed supergraph, its schemas and the gateway's own query planner, built once per edge
 * process and shared by what plans beside ApolloGateway: subscriptions (SubscriptionExecutor)
 * and single-fetch operations (QueryPassthrough). Same planner code, same supergraph, so the
 * same plans as the gateway's.
 */
export class SupergraphPlanning {
  readonly supergraph: Supergraph;
  /** The supergraph as graphql-js, which executeQueryPlan reads. */
  readonly supergraphSchema: GraphQLSchema;
  readonly apiSchema: ReturnType<Supergraph['apiSchema']>;
  /** The API schema as graphql-js: what clients' documents are validated against. */
  readonly schema: GraphQLSchema;
  private readonly planner: QueryPlanner;

  constructor(supergraphSdl: string) {
    this.supergraph = Supergraph.build(supergraphSdl);
    this.supergraphSchema = this.supergraph.schema.toGraphQLJSSchema();
    this.apiSchema = this.supergraph.apiSchema();
    this.schema = this.apiSchema.toGraphQLJSSchema();
    this.planner = new QueryPlanner(this.supergraph);
  }

  plan(document: DocumentNode, operationName: string | undefined | null): QueryPlan {
    return this.planner.buildQueryPlan(operationFromDocument(this.apiSchema, document, { operationName: operationName ?? undefined }));
  }
}

/**
 * Whether one fetch's answer is already the client's: the fetch is all the plan does (nothing
 * after it, no rewrites, no entities to join) and it selects exactly what the client's operation
 * selects (same fields, aliases, arguments and directives, no fragments to expand). Then the
 * gateway's executor would only copy the answer into the same shape, field by field. Anything
 * else keeps the full path.
 */
export function answersAsAsked(fetch: FetchNode, document: DocumentNode, operationName: string | undefined | null): boolean {
  if (fetch.requires?.length || fetch.inputRewrites?.length || fetch.outputRewrites?.length || fetch.contextRewrites?.length) return false;
  if (document.definitions.some((definition) => definition.kind === Kind.FRAGMENT_DEFINITION)) return false;
  const asked = getOperationAST(document, operationName);
  const fetched = getOperationAST(parse(fetch.operation));
  if (!asked || !fetched || asked.operation !== fetched.operation) return false;
  const selection = print(asked.selectionSet);
  return !selection.includes('...') && selection === print(fetched.selectionSet);
}
