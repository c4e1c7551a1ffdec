import { buildOperationContext, executeQueryPlan, type GraphQLDataSource, type GraphQLDataSourceProcessOptions, type ServiceMap } from '@apollo/gateway';
import type { FetchNode, QueryPlan } from '@apollo/query-planner';
import type { ApolloServerOptionsWithGateway } from '@apollo/server';
import { getOperationAST, type DocumentNode, type VariableDefinitionNode } from 'graphql';
import { getVariableValues } from 'graphql/execution/values.js';
import type { EdgeContext } from '../../core/edge-context.js';
import { answersAsAsked, type SupergraphPlanning } from './supergraph-planning.js';

type GatewayResponse = Awaited<ReturnType<GraphQLDataSource<EdgeContext>['process']>>;
type GatewayInterface = ApolloServerOptionsWithGateway<EdgeContext>['gateway'];
type GatewayExecutor = NonNullable<Awaited<ReturnType<GatewayInterface['load']>>['executor']>;
type GatewayRequestContext = Parameters<GatewayExecutor>[0];
/** The data source's request kind for a client's operation (the enum is not exported by @apollo/gateway). */
const INCOMING_OPERATION = 'incoming operation' as Extract<GraphQLDataSourceProcessOptions<EdgeContext>, { incomingRequestContext: unknown }>['kind'];

interface SingleFetch {
  plan: QueryPlan;
  fetch: FetchNode;
  variableDefinitions: readonly VariableDefinitionNode[];
}

/** What is kept for a document that is not one fetch answered as asked: the gateway's executor runs it. */
const NOT_SINGLE = null;

/**
 * The gateway's executor, with a short way for operations one subgraph answers exactly as asked
 * (answersAsAsked): a member lookup, a page of members, a mutation. Such an operation plans to
 * one fetch, and running the plan only copies the subgraph's answer into the same shape, field
 * by field (executeQueryPlan's computeResponse, 7% of a REST page's profile, and the OpenTelemetry
 * spans around it). The short way sends that fetch through the same data source, with the same
 * variables, after the same variable check the gateway makes, and answers with the subgraph's
 * data. Every rule of the edge ran before the executor (key, limits, armor, operation
 * resolution) and the subgraph checks its own (signed principal, validation).
 *
 * Whatever is not the plain case goes the gateway's own way, from the answer already fetched:
 * errors beside the data (the gateway rewrites their paths and codes), no data, a subgraph that
 * cannot be reached. The fetch is never sent twice.
 */
export class QueryPassthrough {
  /** By document object: Apollo's document store hands the same object for the same text, and lets it go when it evicts the text. */
  private readonly singles = new WeakMap<DocumentNode, Map<string, SingleFetch | typeof NOT_SINGLE>>();

  constructor(
    private readonly planning: SupergraphPlanning,
    private readonly services: Record<string, GraphQLDataSource<EdgeContext>>,
  ) {}

  /** ApolloGateway behind Apollo Server's gateway interface, its executor wrapped. */
  wrap(gateway: GatewayInterface): GatewayInterface {
    return {
      onSchemaLoadOrUpdate: (callback) => gateway.onSchemaLoadOrUpdate(callback),
      stop: () => gateway.stop(),
      load: async (options) => {
        const loaded = await gateway.load(options);
        return { executor: loaded.executor && this.executor(loaded.executor) };
      },
    };
  }

  /** `full` for anything but a single fetch answered as asked. */
  executor(full: GatewayExecutor): GatewayExecutor {
    return async (requestContext) => {
      const { request, document } = requestContext;
      const single = this.singleFetch(document, request.operationName);
      if (!single) return full(requestContext);
      const service = this.services[single.fetch.serviceName];
      if (!service) return full(requestContext);

      // The gateway's own check before it plans (validateIncomingRequest): variables that do not
      // coerce to their declared types are the client's error, and nothing is fetched.
      if (single.variableDefinitions.length) {
        const { errors } = getVariableValues(this.planning.schema, single.variableDefinitions, request.variables ?? {});
        if (errors) return { errors };
      }
      // As executeQueryPlan sends them: the variables the fetch uses, as the client gave them.
      const variables: Record<string, unknown> = Object.create(null);
      for (const name of single.fetch.variableUsages ?? []) {
        const value = request.variables?.[name];
        if (value !== undefined) variables[name] = value;
      }

      let answer: () => Promise<GatewayResponse>;
      try {
        const response = await service.process({
          kind: INCOMING_OPERATION,
          request: { query: single.fetch.operation, variables, operationName: single.fetch.operationName },
          incomingRequestContext: requestContext as never,
          context: requestContext.context as EdgeContext,
          document: single.fetch.operationDocumentNode,
        });
        if (response.data && !response.errors?.length) return { data: response.data };
        answer = async () => response;
      } catch (error) {
        answer = async () => {
          throw error;
        };
      }
      return this.completeAsTheGatewayWould(single, requestContext, answer);
    };
  }

  private singleFetch(document: DocumentNode | undefined, operationName: string | undefined | null): SingleFetch | null {
    if (!document) return null;
    let byName = this.singles.get(document);
    if (!byName) this.singles.set(document, (byName = new Map()));
    const name = operationName ?? '';
    let single = byName.get(name);
    if (single === undefined) byName.set(name, (single = this.planSingle(document, operationName)));
    return single;
  }

  private planSingle(document: DocumentNode, operationName: string | undefined | null): SingleFetch | null {
    let plan: QueryPlan;
    try {
      plan = this.planning.plan(document, operationName);
    } catch {
      // Whatever the planner refuses, the gateway's executor reports in its own words.
      return NOT_SINGLE;
    }
    if (plan.node?.kind !== 'Fetch' || !answersAsAsked(plan.node, document, operationName)) return NOT_SINGLE;
    return { plan, fetch: plan.node, variableDefinitions: getOperationAST(document, operationName)?.variableDefinitions ?? [] };
  }

  /** The gateway's executeQueryPlan over the same plan, its one fetch answered by what came back. */
  private async completeAsTheGatewayWould(single: SingleFetch, requestContext: GatewayRequestContext, answer: () => Promise<GatewayResponse>) {
    const serviceMap: ServiceMap = { ...this.services, [single.fetch.serviceName]: { process: answer } };
    const operationContext = buildOperationContext({
      schema: this.planning.schema,
      operationDocument: requestContext.document!,
      operationName: requestContext.request.operationName,
    });
    return executeQueryPlan(single.plan, serviceMap, requestContext as never, operationContext, this.planning.supergraphSchema, this.planning.apiSchema);
  }
}
