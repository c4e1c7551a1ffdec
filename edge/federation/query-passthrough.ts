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

/** Query text kept for the short HTTP way, in characters; past it the table starts over. */
const MAX_ACCEPTED_CHARS = 8 * 1024 * 1024;

/**
 * On the request's context: the answer a short-way fetch got, which Apollo's pipeline completes
 * without fetching again. A property, not a map by context: Apollo hands the executor a shallow copy.
 */
const PREFETCHED = Symbol('prefetched answer');
type WithPrefetched = { [PREFETCHED]?: Prefetched };

/** A fetch the short HTTP way sent already, with what came back, for the executor to finish. */
interface Prefetched {
  fetch: FetchNode;
  answer: () => Promise<GatewayResponse>;
}

/** The outcome of `sendAccepted`: the client's answer, or the case for Apollo's pipeline. */
export type ShortAnswer = { data: Record<string, unknown> } | undefined;

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
  /**
   * Query texts (with their operation name) that Apollo's pipeline parsed, validated (every armor
   * rule), resolved and handed to this executor as a single fetch. All of that depends on the text
   * alone, so the same text is accepted again without the pipeline (`sendAccepted`).
   */
  private accepted = new Map<string, SingleFetch>();
  private acceptedChars = 0;

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
      const prefetched = (requestContext.context as WithPrefetched)[PREFETCHED];
      if (prefetched && prefetched.fetch.serviceName === single.fetch.serviceName && prefetched.fetch.operation === single.fetch.operation) {
        return this.completeAsTheGatewayWould(single, requestContext, prefetched.answer);
      }
      if (typeof request.query === 'string') this.accept(request.query, request.operationName, single);

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

  /**
   * Apollo's pipeline for a text it accepted before, skipped: the same variable check, the same
   * fetch through the same data source. Undefined when the text is not known, the variables do
   * not coerce, or the answer is not plain data; the caller then runs Apollo's pipeline with the
   * same `context`, and this executor completes any answer already fetched (it is never sent twice).
   */
  async sendAccepted(query: string, operationName: string | undefined, variables: Record<string, unknown> | undefined, context: EdgeContext): Promise<ShortAnswer> {
    const single = this.accepted.get(acceptedKey(query, operationName));
    if (!single) return undefined;
    const service = this.services[single.fetch.serviceName];
    if (!service) return undefined;
    if (single.variableDefinitions.length && getVariableValues(this.planning.schema, single.variableDefinitions, variables ?? {}).errors) return undefined;
    const used: Record<string, unknown> = Object.create(null);
    for (const name of single.fetch.variableUsages ?? []) {
      const value = variables?.[name];
      if (value !== undefined) used[name] = value;
    }
    const request = { query: single.fetch.operation, variables: used, operationName: single.fetch.operationName };
    try {
      const response = await service.process({
        kind: INCOMING_OPERATION,
        request,
        incomingRequestContext: { request, context } as never,
        context,
        document: single.fetch.operationDocumentNode,
      });
      if (response.data && !response.errors?.length) return { data: response.data };
      (context as WithPrefetched)[PREFETCHED] = { fetch: single.fetch, answer: async () => response };
    } catch (error) {
      (context as WithPrefetched)[PREFETCHED] = {
        fetch: single.fetch,
        answer: async () => {
          throw error;
        },
      };
    }
    return undefined;
  }

  private accept(query: string, operationName: string | undefined | null, single: SingleFetch): void {
    const key = acceptedKey(query, operationName ?? undefined);
    if (this.accepted.has(key)) return;
    if (this.acceptedChars + key.length > MAX_ACCEPTED_CHARS) {
      this.accepted = new Map();
      this.acceptedChars = 0;
    }
    this.accepted.set(key, single);
    this.acceptedChars += key.length;
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

/** No operation name is \u0001, which no name can be: an empty name is not the same request (Apollo refuses it). */
function acceptedKey(query: string, operationName: string | undefined): string {
  return `${operationName ?? '\u0001'}\u0000${query}`;
}
