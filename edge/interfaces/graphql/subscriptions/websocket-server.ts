import type http from 'node:http';
import type { ApolloServer } from '@apollo/server';
import { getOperationAST, getVariableValues, GraphQLError, type DocumentNode, type ExecutionArgs, type ExecutionResult, type FormattedExecutionResult, type ValidationRule } from 'graphql';
import type { SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { keyRefusal } from '../../../../identity/identity.service.js';
import type { EdgeContext } from '../../../../core/edge-context.js';
import { nestsDeeperThan } from '../../../../core/json-depth.js';
import type { SubscriptionLimits } from '../../../edge-settings.js';
import { operationResolutionError } from '../../../federation/operation-resolution.plugin.js';
import { tooDeepGraphQLError } from '../json-depth-guard.js';
import { BackPressure } from './back-pressure.js';
import { KeyRechecks } from './key-rechecks.js';
import { SocketAuthentication, type SocketAuthenticationOptions } from './socket-authentication.js';
import { formattedResult, internalError, refuse, withCode } from './socket-errors.js';
import { OpenSockets, type HookContext, type SocketContext, type SocketState } from './socket-state.js';
import { SubscriptionExecution } from './subscription-execution.js';
import type { SubscriptionExecutor } from './subscription-executor.js';
import { rateLimitRefusals, trackActiveSubscriptions, trackOpenWebsockets } from '../../../../core/metrics/platform-metrics.js';
import { ValidatedDocuments } from './validated-documents.js';

/** Caps on subscriptions, the keep-alive interval, and how often open sockets' keys are read again (the platform's settings). */
export type { SubscriptionLimits };
export { CLOSE_FORBIDDEN, CLOSE_TOO_MANY_REQUESTS, CLOSE_TOO_SLOW, CLOSE_UNAUTHORIZED } from './socket-state.js';

export interface WebSocketServerOptions extends SocketAuthenticationOptions {
  httpServer: http.Server;
  apollo: ApolloServer<EdgeContext>;
  executor: SubscriptionExecutor;
  validationRules: ValidationRule[];
  maxTokens: number;
  /** How deeply an operation's variables and extensions may nest (JSON_MAX_DEPTH). */
  jsonMaxDepth: number;
  limits: SubscriptionLimits;
  logger: Logger;
}

/**
 * graphql-ws on the gateway's /graphql. The key is sent once, in connectionParams, and checked
 * like an HTTP request's (socket-authentication.ts), and read again on an interval
 * (key-rechecks.ts); each operation counts in the windows such a request counts in. Queries and
 * mutations run on the gateway's Apollo server; subscriptions are planned by the gateway's query
 * planner and their events completed across subgraphs (subscription-execution.ts), within the
 * socket's and the instance's bounds on what a slow client may hold (back-pressure.ts).
 */
export function serveWebSockets(options: WebSocketServerOptions): { dispose(): Promise<void>; activeSubscriptions(): number; openSockets(): number } {
  const wss = new WebSocketServer({ server: options.httpServer, path: '/graphql' });
  const open = new OpenSockets();
  const authentication = new SocketAuthentication(options, open);
  const rechecks = new KeyRechecks(open, options.identityOrm, options.sessions, options.logger, options.limits.keyRecheckMs);
  const backPressure = new BackPressure(open, options.limits, options.logger);
  const documents = new ValidatedDocuments(options.executor.schema, options.validationRules, options.maxTokens);
  const execution = new SubscriptionExecution(open, options.executor, backPressure, options.limits, options.logger);

  /**
   * A graphql-ws hook whose failure is its operation's error, logged under the operation's request
   * id: graphql-ws ends the socket (4500), and every subscription on it, on anything a hook throws.
   */
  const guarded =
    <A extends unknown[], R, E>(what: string, requestIdOf: (...args: A) => string, answer: (errors: GraphQLError[]) => E, hook: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R | E> => {
      try {
        return await hook(...args);
      } catch (error) {
        return answer([internalError(error, requestIdOf(...args), options.logger, what)]);
      }
    };
  const requestIdOf = (args: ExecutionArgs) => (args.contextValue as SocketContext).requestId;

  /** An operation's checks before it runs: the key still good, the limits, the document and its variables. */
  const admit = async (state: SocketState | undefined, id: string, payload: SubscribePayload): Promise<ExecutionArgs | readonly GraphQLError[]> => {
    if (!state) return refuse('Not connected', 'UNAUTHENTICATED', 'missing_api_key');
    const expired = state.key && keyRefusal(state.key);
    if (expired) {
      OpenSockets.forbid(state, expired);
      return refuse('The API key no longer authenticates', 'UNAUTHENTICATED', expired);
    }
    // Every operation over the socket counts like one HTTP request with its key, in the same windows.
    const windows = options.edge.windows(state.principal, state.key, undefined);
    const breach = (await options.limiter.hit(windows)).find((w) => w.exceeded);
    if (breach) {
      const exceeded = options.edge.exceeded(breach.window);
      rateLimitRefusals.inc({ interface: 'graphql-ws' });
      return refuse(exceeded.message, 'RATE_LIMITED', exceeded.code);
    }
    // Refused before anything walks them: the subgraph fetch serialises variables recursively.
    if (nestsDeeperThan(payload.variables, options.jsonMaxDepth) || nestsDeeperThan(payload.extensions, options.jsonMaxDepth)) {
      return [tooDeepGraphQLError(options.jsonMaxDepth)];
    }
    const document = documents.document(payload.query);
    if (!isDocument(document)) return document;
    // Refused here, as an `error` message, like a document that fails validation: nothing ran.
    const operation = getOperationAST(document, payload.operationName);
    if (!operation) return [operationResolutionError(payload.operationName)];
    const coerced = getVariableValues(options.executor.schema, operation.variableDefinitions ?? [], payload.variables ?? {}, { maxErrors: 50 });
    if (coerced.errors) return coerced.errors.map((error) => withCode(error, 'BAD_USER_INPUT'));
    return {
      schema: options.executor.schema,
      document,
      variableValues: payload.variables ?? undefined,
      operationName: payload.operationName ?? undefined,
      contextValue: { principal: state.principal, requestId: `${state.requestId}:${id}`, socket: state, operationId: id } satisfies SocketContext,
    } as ExecutionArgs;
  };

  const server = useServer<Record<string, unknown>, { state?: SocketState }>(
    {
      schema: options.executor.schema,
      onConnect: (ctx) => authentication.connect(ctx.extra.socket, ctx.extra.request, ctx.connectionParams),
      onSubscribe: guarded(
        'an operation over a websocket failed before it ran',
        (ctx: HookContext, id: string, _payload: SubscribePayload) => `${open.states.get(ctx.extra.socket)?.requestId}:${id}`,
        (errors) => errors,
        (ctx: HookContext, id: string, payload: SubscribePayload) => admit(open.states.get(ctx.extra.socket), id, payload),
      ),
      onNext: (_ctx, _id, _payload, _args, result) => formattedResult(result),
      execute: guarded('an operation over a websocket failed', requestIdOf, (errors) => ({ errors }), async (args: ExecutionArgs): Promise<ExecutionResult | FormattedExecutionResult> => {
        const response = await options.apollo.executeOperation(
          { query: args.document, variables: (args.variableValues ?? {}) as Record<string, unknown>, operationName: args.operationName ?? undefined },
          { contextValue: { principal: (args.contextValue as SocketContext).principal, requestId: (args.contextValue as SocketContext).requestId } },
        );
        if (response.body.kind !== 'single') return { errors: [new GraphQLError('Incremental delivery is not served over websockets')] };
        // Errors formatted and masked by Apollo, as over HTTP: plain objects (formattedResult).
        return response.body.singleResult;
      }) as never,
      subscribe: guarded('a subscription over a websocket failed to start', requestIdOf, (errors) => ({ errors }), (args: ExecutionArgs) => execution.subscribe(args)) as never,
      onClose: async (ctx) => {
        const state = open.states.get(ctx.extra.socket);
        open.states.delete(ctx.extra.socket);
        await state?.upstream.dispose();
      },
    },
    wss,
    options.limits.keepAliveMs,
  );

  // Read when Prometheus scrapes: nothing is counted on the sockets' path.
  const untrack = [trackOpenWebsockets(() => open.states.size), trackActiveSubscriptions(() => open.active)];
  return {
    dispose: async () => {
      for (const remove of untrack) remove();
      rechecks.stop();
      backPressure.stop();
      await server.dispose();
    },
    activeSubscriptions: () => open.active,
    openSockets: () => open.states.size,
  };
}

function isDocument(value: DocumentNode | readonly GraphQLError[]): value is DocumentNode {
  return !Array.isArray(value);
}
