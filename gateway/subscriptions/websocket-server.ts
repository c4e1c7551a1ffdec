import type http from 'node:http';
import type { ApolloServer } from '@apollo/server';
import type { MikroORM } from '@mikro-orm/postgresql';
import { GraphQLError, parse, specifiedRules, validate, type ExecutionArgs, type ExecutionResult, type ValidationRule } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import { IdentityService } from '../../platform/identity/identity.service.js';
import type { Principal } from '../../subgraphs/shared/principal.js';
import type { EdgeContext } from '../edge-context.js';
import type { EdgeInterface } from '../edge-interface.js';
import { parseBearer } from '../edge-interfaces.js';
import type { ApiKey } from '../../platform/identity/api-key.entity.js';
import type { RateLimiter } from '../rate-limit/rate-limiter.js';
import type { SubscriptionExecutor } from './subscription-executor.js';
import { UpstreamClients } from './upstream-clients.js';

export interface SubscriptionLimits {
  perSocket: number;
  perInstance: number;
  keepAliveMs: number;
}


/** Close codes a client sees (graphql-ws's own where they exist). */
export const CLOSE_UNAUTHORIZED = 4401;
export const CLOSE_FORBIDDEN = 4403;

interface SocketState {
  principal: Principal;
  /** The key's own limits (traceroute keys) count over the socket too. */
  key: ApiKey;
  upstream: UpstreamClients;
  subscriptions: number;
  requestId: string;
}

/** An operation's context over the socket: the edge's, plus the socket it came on. */
interface SocketContext extends EdgeContext {
  socket: SocketState;
}

function bearer(params: Readonly<Record<string, unknown>> | undefined): string | undefined {
  return parseBearer(params?.authorization ?? params?.Authorization ?? (params?.headers as Record<string, unknown> | undefined)?.authorization);
}

/**
 * graphql-ws serialises errors with their toJSON, which an upstream subgraph's errors (plain
 * objects off its socket) lack: it would fail and the client would see a bare `complete`. They
 * are rebuilt with what a client may see of them (message, path, code, reason, param).
 */
function clientErrors(result: ExecutionResult): ExecutionResult {
  if (!result.errors?.length) return result;
  return {
    ...result,
    errors: result.errors.map((error: unknown) => {
      if (error instanceof GraphQLError) return error;
      const plain = error as { message?: unknown; path?: readonly (string | number)[]; extensions?: Record<string, unknown> };
      const { code, reason, param } = plain.extensions ?? {};
      const extensions = Object.fromEntries(Object.entries({ code, reason, param }).filter(([, value]) => value !== undefined));
      return new GraphQLError(String(plain.message), { path: plain.path, extensions });
    }),
  };
}

function refuse(message: string, code: string, reason: string): readonly GraphQLError[] {
  return [new GraphQLError(message, { extensions: { code, reason } })];
}

/**
 * graphql-ws on the gateway's /graphql. The key is sent once, in connectionParams, and checked
 * like an HTTP request's; each operation is counted in the key's rate-limit windows. Queries and
 * mutations run on the gateway's Apollo server; subscriptions are planned by the gateway's query
 * planner, their primary fetch is opened on the owning subgraph over graphql-ws, and each event
 * is completed across subgraphs (SubscriptionExecutor).
 */
export function serveWebSockets(options: {
  httpServer: http.Server;
  apollo: ApolloServer<EdgeContext>;
  executor: SubscriptionExecutor;
  identityOrm: MikroORM;
  limiter: RateLimiter;
  edge: EdgeInterface;
  subgraphUrls: Record<string, string>;
  internalSecret: string;
  validationRules: ValidationRule[];
  maxTokens: number;
  limits: SubscriptionLimits;
  logger: Logger;
}): { dispose(): Promise<void>; activeSubscriptions(): number } {
  const wss = new WebSocketServer({ server: options.httpServer, path: '/graphql' });
  const sockets = new WeakMap<WebSocket, SocketState>();
  let active = 0;
  let connections = 0;
  const rules = [...specifiedRules, ...options.validationRules];

  const server = useServer<Record<string, unknown>, { state?: SocketState }>(
    {
      schema: options.executor.schema,
      onConnect: async (ctx) => {
        const secret = bearer(ctx.connectionParams);
        const socket = ctx.extra.socket;
        if (!secret) {
          socket.close(CLOSE_UNAUTHORIZED, 'Unauthorized: send {"authorization": "Bearer <API key>"} in connectionParams');
          return false;
        }
        const result = await new IdentityService(options.identityOrm.em.fork()).authenticate(secret);
        if (!result.ok) {
          socket.close(CLOSE_UNAUTHORIZED, `Unauthorized: ${result.reason}`);
          return false;
        }
        connections += 1;
        sockets.set(socket, {
          principal: result.principal,
          key: result.key,
          upstream: new UpstreamClients(options.subgraphUrls, result.principal, options.internalSecret),
          subscriptions: 0,
          requestId: `ws_${connections}_${Date.now().toString(36)}`,
        });
        return true;
      },
      onSubscribe: async (ctx, id, payload) => {
        const state = sockets.get(ctx.extra.socket);
        if (!state) return refuse('Not connected', 'UNAUTHENTICATED', 'missing_api_key');
        // Every operation over the socket counts like one HTTP request of the key.
        const windows = options.edge.windows(state.principal, state.key);
        const breach = (await options.limiter.hit(`key:${state.principal.keyId}`, windows)).find((w) => w.exceeded);
        if (breach) {
          const exceeded = options.edge.exceeded(breach.window);
          return refuse(exceeded.message, 'RATE_LIMITED', exceeded.code);
        }
        let document;
        try {
          document = parse(payload.query, { maxTokens: options.maxTokens });
        } catch (error) {
          return refuse((error as Error).message, 'GRAPHQL_PARSE_FAILED', 'invalid_query');
        }
        const errors = validate(options.executor.schema, document, rules);
        if (errors.length) return errors;
        return {
          schema: options.executor.schema,
          document,
          variableValues: payload.variables ?? undefined,
          operationName: payload.operationName ?? undefined,
          contextValue: { principal: state.principal, requestId: `${state.requestId}:${id}`, socket: state } satisfies SocketContext,
        } as ExecutionArgs;
      },
      execute: (async (args: ExecutionArgs): Promise<ExecutionResult> => {
        const response = await options.apollo.executeOperation(
          { query: args.document, variables: (args.variableValues ?? {}) as Record<string, unknown>, operationName: args.operationName ?? undefined },
          { contextValue: { principal: (args.contextValue as SocketContext).principal, requestId: (args.contextValue as SocketContext).requestId } },
        );
        if (response.body.kind !== 'single') return { errors: [new GraphQLError('Incremental delivery is not served over websockets')] };
        return response.body.singleResult as ExecutionResult;
      }) as never,
      subscribe: (async (args: ExecutionArgs) => {
        const { socket: state, ...context } = args.contextValue as SocketContext;
        if (state.subscriptions >= options.limits.perSocket) {
          return { errors: refuse(`At most ${options.limits.perSocket} subscriptions per connection`, 'BAD_REQUEST', 'too_many_subscriptions') };
        }
        if (active >= options.limits.perInstance) {
          return { errors: refuse('This instance serves no more subscriptions now; retry on another', 'SERVICE_UNAVAILABLE', 'too_many_subscriptions') };
        }
        const planned = options.executor.plan(args.document, args.operationName ?? undefined);
        const variables = (args.variableValues ?? {}) as Record<string, unknown>;
        const sent = Object.fromEntries((planned.primary.variableUsages ?? []).filter((name) => name in variables).map((name) => [name, variables[name]]));
        const upstream = state.upstream.for(planned.primary.serviceName).iterate({
          query: planned.primary.operation,
          variables: sent,
          operationName: planned.primary.operationName,
        });
        state.subscriptions += 1;
        active += 1;
        return (async function* () {
          try {
            for await (const event of upstream) {
              yield clientErrors(await planned.resolveEvent(event as ExecutionResult, context, variables));
            }
          } finally {
            state.subscriptions -= 1;
            active -= 1;
            await upstream.return?.();
          }
        })();
      }) as never,
      onClose: async (ctx) => {
        await sockets.get(ctx.extra.socket)?.upstream.dispose();
      },
    },
    wss,
    options.limits.keepAliveMs,
  );

  return {
    dispose: async () => {
      await server.dispose();
    },
    activeSubscriptions: () => active,
  };
}
