import {
  buildOperationContext,
  executeQueryPlan,
  type GraphQLDataSource,
  type ServiceMap,
} from '@apollo/gateway';
import type { FetchNode, PlanNode, QueryPlan } from '@apollo/query-planner';
import type { DocumentNode, ExecutionResult, GraphQLSchema } from 'graphql';
import type { Logger } from 'pino';
import type { EdgeContext } from '../../../../core/edge-context.js';
import { answersAsAsked, SupergraphPlanning } from '../../../federation/supergraph-planning.js';

/** The pseudo-service that answers a subscription's primary fetch with the event just received. */
const EVENT_SERVICE = '__event__';

export interface PlannedSubscription {
  /** The fetch to open on the owning subgraph (its operation text and variables to send). */
  primary: FetchNode;
  /** Whether events pass through as they come (answersAsAsked), without running the plan. */
  passthrough: boolean;
  /** Resolves one event into the client's result: the rest of the plan run per event. */
  resolveEvent(event: ExecutionResult, context: EdgeContext, variables: Record<string, unknown>): Promise<ExecutionResult>;
}

/**
 * Plans subscriptions with the gateway's own query planner over the committed supergraph, and
 * completes each event by running `Sequence[primary answered by the event, rest]` through the
 * gateway's executeQueryPlan: fields owned by other subgraphs are fetched per event, with the
 * subscriber's signed principal, and aliases come out as the client asked.
 */
export class SubscriptionExecutor {
  private readonly planning: SupergraphPlanning;
  /** The API schema graphql-ws validates client documents against. */
  readonly schema: GraphQLSchema;

  constructor(
    supergraph: string | SupergraphPlanning,
    private readonly services: Record<string, GraphQLDataSource<EdgeContext>>,
    private readonly logger: Logger,
  ) {
    this.planning = typeof supergraph === 'string' ? new SupergraphPlanning(supergraph) : supergraph;
    this.schema = this.planning.schema;
  }

  /**
   * Plans by document object and operation name. The websocket server hands the same object for
   * the same text (its cache of validated documents), so a thousand subscribers of one document
   * are planned once; a plan holds nothing of a subscriber (principal and variables come per event).
   */
  private readonly plans = new WeakMap<DocumentNode, Map<string, PlannedSubscription>>();

  /** Plans a subscription operation; throws when the document has no subscription to plan. */
  plan(document: DocumentNode, operationName: string | undefined): PlannedSubscription {
    let byName = this.plans.get(document);
    if (!byName) this.plans.set(document, (byName = new Map()));
    let planned = byName.get(operationName ?? '');
    if (!planned) byName.set(operationName ?? '', (planned = this.planAnew(document, operationName)));
    return planned;
  }

  private planAnew(document: DocumentNode, operationName: string | undefined): PlannedSubscription {
    const plan = this.planning.plan(document, operationName);
    if (plan.node?.kind !== 'Subscription') throw new Error('The operation is not a subscription');
    const { primary, rest } = plan.node;
    const operationContext = buildOperationContext({ schema: this.schema, operationDocument: document, operationName });
    // An event of the primary fetch is the client's answer when nothing follows it in the plan.
    const passthrough = !rest && answersAsAsked(primary, document, operationName);
    const perEvent: QueryPlan = {
      kind: 'QueryPlan',
      node: { kind: 'Sequence', nodes: [{ ...primary, serviceName: EVENT_SERVICE }, ...(rest ? [rest as PlanNode] : [])] },
    };
    return {
      primary,
      passthrough,
      resolveEvent: async (event, context, variables) => {
        if (!event.data) return { errors: event.errors };
        // The owning subgraph answered exactly the client's selection: nothing to fetch or reshape.
        if (passthrough && !event.errors?.length) return { data: event.data };
        const serviceMap: ServiceMap = {
          ...this.services,
          [EVENT_SERVICE]: { process: async () => ({ data: event.data, errors: event.errors as never }) },
        };
        const result = await executeQueryPlan(
          perEvent,
          serviceMap,
          {
            request: { query: undefined, variables, operationName },
            document,
            operationName: operationName ?? null,
            context,
            // A fresh metrics object per event: the executor writes into it.
            metrics: {},
            logger: this.logger,
            cache: undefined,
            overallCachePolicy: undefined,
          } as never,
          operationContext,
          this.planning.supergraphSchema,
          this.planning.apiSchema,
        );
        return { data: result.data as ExecutionResult['data'], errors: result.errors as ExecutionResult['errors'] };
      },
    };
  }
}
