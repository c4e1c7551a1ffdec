import type http from 'node:http';
import type { ApolloServer } from '@apollo/server';
import type { MikroORM } from '@mikro-orm/postgresql';
import {
  getOperationAST,
  getVariableValues,
  GraphQLError,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FormattedExecutionResult,
  type ValidationRule,
} from 'graphql';
import type { Context, SubscribePayload } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import { IdentityService, keyRefusal } from '../../../../identity/identity.service.js';
import type { KeyCache } from '../../../../identity/key-cache.js';
import type { Principal } from '../../../../core/principal.js';
import { clientExtensions, internalErrorMessage, isClientError, isMasked } from '../../../../core/error-masking.js';
import type { EdgeContext } from '../../../../core/edge-context.js';
import type { EdgeInterface } from '../../../access/edge-interface.js';
import { parseBearer } from '../../../access/key-windows.js';
import type { ApiKey } from '../../../../identity/api-key.entity.js';
import type { SubscriptionLimits } from '../../../edge-settings.js';
import type { RateLimiter } from '../../../access/rate-limiter.js';
import type { SessionAuthenticator } from '../../../access/session-auth.js';
import type { SubscriptionExecutor } from './subscription-executor.js';
import { UpstreamClients } from './upstream-clients.js';
import { upstreamStream } from './upstream-stream.js';
import { nestsDeeperThan } from '../../../../core/json-depth.js';
import { tooDeepGraphQLError } from '../json-depth-guard.js';
import { operationResolutionError } from '../../../federation/operation-resolution.plugin.js';
import { UNAVAILABLE_MESSAGE } from '../../../federation/signing-data-source.js';

/** Caps on subscriptions, the keep-alive interval, and how often open sockets' keys are read again (the platform's settings). */
export type { SubscriptionLimits };

/** Validated subscription documents kept per server (most recently used). */
const VALIDATED_DOCUMENTS = 500;

/** Close codes a client sees (graphql-ws's own where they exist). */
export const CLOSE_UNAUTHORIZED = 4401;
export const CLOSE_FORBIDDEN = 4403;
/** Too many failed authentications from the client's address (graphql-ws's "too many" code). */
export const CLOSE_TOO_MANY_REQUESTS = 4429;
/**
 * The client reads too slowly (WebSocket's "try again later"): graphql-ws's clients reconnect on
 * it, where they would give up on a 1008. What it missed it reads again over the HTTP API.
 */
export const CLOSE_TOO_SLOW = 1013;
/**
 * Events a relayed subscription may have waiting behind graphql-ws's loop (which waits for each
 * write to reach the kernel) before its socket counts as too slow: maxUnsentBytes at 1 KiB per
 * event (a relayed event is not serialised until it is written), 1,024 by default.
 */
const maxQueuedEvents = (limits: SubscriptionLimits) => Math.max(16, Math.floor(limits.maxUnsentBytes / 1024));

interface SocketState {
  socket: WebSocket;
  principal: Principal;
  /** The key's own limits (traceroute keys) count over the socket too; absent on a dashboard session's socket. */
  key?: ApiKey;
  /** The dashboard session (its id, the token's hash) a socket without a key was opened with. */
  sessionId?: string;
  upstream: UpstreamClients;
  subscriptions: number;
  requestId: string;
}

/** graphql-ws's context of a socket, as its hooks get it. */
type HookContext = Context<Record<string, unknown>, Extra & { state?: SocketState }>;

/** An operation's context over the socket: the edge's, plus the socket it came on and the operation's id on it. */
interface SocketContext extends EdgeContext {
  socket: SocketState;
  operationId: string;
}

/**
 * The JSON of a passed-through event's payload, by the event object. A grouped upstream frame
 * hands one object to every subscription it lists (grouped-frames.ts), so it is written once.
 */
const payloadJson = new WeakMap<object, string>();

/** The payload JSON of an event that is the client's answer as it came: `{"data": ...}`, made once per event object. */
function passedThroughJson(event: ExecutionResult): string {
  let json = payloadJson.get(event);
  if (json === undefined) payloadJson.set(event, (json = JSON.stringify({ data: event.data })));
  return json;
}

/** graphql-ws's `next` message around a payload's JSON, as its own stringifyMessage writes it. */
function nextFrame(operationId: string, payloadJson: string): string {
  return `{"id":${JSON.stringify(operationId)},"type":"next","payload":${payloadJson}}`;
}

function bearer(params: Readonly<Record<string, unknown>> | undefined): string | undefined {
  return parseBearer(params?.authorization ?? params?.Authorization ?? (params?.headers as Record<string, unknown> | undefined)?.authorization);
}

/**
 * What a client may see of an event's errors. graphql-ws serialises errors with their toJSON,
 * which an upstream subgraph's errors (plain objects off its socket) lack: it would fail and the
 * client would see a bare `complete`; so every error is rebuilt with its message, path and client
 * extensions. Subgraphs mask their own internal errors (under this operation's request id), but
 * the edge's per-event fetches of other subgraphs' fields can fail here too (an unreachable
 * service, with its address in the message): any such error gets the generic message and the
 * request id, as over HTTP.
 */
function clientErrors(result: ExecutionResult, requestId: string, logger: Logger): ExecutionResult {
  if (!result.errors?.length) return result;
  return {
    ...result,
    errors: result.errors.map((error: unknown) => {
      const plain = error as { message?: unknown; path?: readonly (string | number)[]; extensions?: Record<string, unknown> };
      if (!isMasked(plain) && !isClientError(plain.extensions?.code)) return internalError(error, requestId, logger, 'internal error in a subscription event', plain.path);
      return new GraphQLError(String(plain.message), { path: plain.path, extensions: clientExtensions(plain.extensions) });
    }),
  };
}

/** An error that is not the client's doing: logged under the request id, which is all the client is told, as over HTTP. */
function internalError(error: unknown, requestId: string, logger: Logger, what: string, path?: readonly (string | number)[]): GraphQLError {
  logger.error({ err: error, requestId, path }, `${what}; the client was told only the request id`);
  return new GraphQLError(internalErrorMessage(requestId), { path, extensions: { code: 'INTERNAL_SERVER_ERROR', requestId } });
}

/**
 * Why a subscription's upstream operation ended in failure, as the client's error: the subgraph's
 * own refusal (an `error` message, errors it formatted and masked) keeps its message and code;
 * its socket lost or never opened is SERVICE_UNAVAILABLE, as an unreachable subgraph is over HTTP.
 */
function upstreamFailure(error: unknown, requestId: string, logger: Logger): GraphQLError {
  if (Array.isArray(error) && error.length) return clientErrors({ errors: error }, requestId, logger).errors![0];
  // ws hands its events (ErrorEvent, CloseEvent) with the socket on them: the log keeps their gist.
  const { error: cause, message, code, reason } = (error ?? {}) as { error?: unknown; message?: unknown; code?: unknown; reason?: unknown };
  logger.warn({ err: error instanceof Error ? error : cause, upstream: { message, code, reason }, requestId }, 'a subscription lost its subgraph operation');
  return new GraphQLError(UNAVAILABLE_MESSAGE, { extensions: { code: 'SERVICE_UNAVAILABLE', reason: 'service_unavailable', requestId } });
}

/** A validation or variable error with the code Apollo gives it over HTTP, and of its extensions what a client sees there. */
function withCode(error: GraphQLError, code: string): GraphQLError {
  return new GraphQLError(error.message, { nodes: error.nodes, extensions: clientExtensions({ ...error.extensions, code }) });
}

/**
 * graphql-ws writes each error of a result with GraphQLError's toJSON. Apollo's answers (queries
 * and mutations, run by `execute` below) carry errors it formatted and masked already: plain
 * objects, written as they are; calling toJSON on them threw, and graphql-ws closed the socket.
 */
function formattedResult(result: ExecutionResult): FormattedExecutionResult | undefined {
  if (!result.errors?.some((error) => !(error instanceof GraphQLError))) return undefined;
  return { ...result, errors: result.errors.map((error) => (error instanceof GraphQLError ? error.toJSON() : error)) };
}

function refuse(message: string, code: string, reason: string): readonly GraphQLError[] {
  return [new GraphQLError(message, { extensions: { code, reason } })];
}

/**
 * graphql-ws on the gateway's /graphql. The key is sent once, in connectionParams, and checked
 * like an HTTP request's; each operation counts in the windows such a request counts in (the
 * account's for membership keys, the key's own for others). Queries and mutations run on the
 * gateway's Apollo server; subscriptions are planned by the gateway's query planner, their
 * primary fetch is opened on the owning subgraph over graphql-ws, and each event is completed
 * across subgraphs (SubscriptionExecutor).
 */
export function serveWebSockets(options: {
  httpServer: http.Server;
  apollo: ApolloServer<EdgeContext>;
  executor: SubscriptionExecutor;
  identityOrm: MikroORM;
  /** The edge's cache of looked-up keys; the periodic re-checks of open sockets read the store itself. */
  keyCache?: KeyCache;
  /** The dashboard's sessions: a socket without a key may authenticate with the session cookie. */
  sessions?: SessionAuthenticator;
  limiter: RateLimiter;
  edge: EdgeInterface;
  subgraphUrls: Record<string, string>;
  internalSecret: string;
  validationRules: ValidationRule[];
  maxTokens: number;
  /** How deeply an operation's variables and extensions may nest (JSON_MAX_DEPTH). */
  jsonMaxDepth: number;
  limits: SubscriptionLimits;
  logger: Logger;
}): { dispose(): Promise<void>; activeSubscriptions(): number; openSockets(): number } {
  const wss = new WebSocketServer({ server: options.httpServer, path: '/graphql' });
  const sockets = new Map<WebSocket, SocketState>();
  let active = 0;
  let connections = 0;
  const rules = [...specifiedRules, ...options.validationRules];
  /**
   * Documents that parsed and passed every rule (graphql-js's and the abuse limits), by their
   * text: the schema and rules are fixed for this server, so the same text always gets the same
   * verdict, and a thousand clients subscribing with one document parse and validate it once.
   * Refused documents are not kept; they are checked again each time.
   */
  const validated = new Map<string, DocumentNode>();

  /**
   * Closes a socket whose client has fallen too far behind with 1013, once; nothing more is
   * written to it. The events go to each client as they come: without a bound, a client that
   * stops reading makes the edge keep every later event for it, for as long as its socket is open.
   */
  const closeTooSlow = (state: SocketState, behind: { unsent: number; instanceUnsent?: number } | { queued: number }) => {
    options.logger.warn({ requestId: state.requestId, ...behind }, 'closing a websocket whose client reads too slowly');
    const reason =
      'queued' in behind
        ? `Too slow: ${behind.queued} events waiting`
        : `Too slow: ${behind.unsent} bytes unsent${behind.instanceUnsent === undefined ? '' : ", the most of the instance's sockets"}`;
    state.socket.close(CLOSE_TOO_SLOW, reason);
  };
  /** Whether nothing more may be written to the socket: closing, or more than maxUnsentBytes unsent (then closed). */
  const unwritable = (state: SocketState): boolean => {
    if (state.socket.readyState !== state.socket.OPEN) return true;
    const unsent = state.socket.bufferedAmount;
    if (unsent <= options.limits.maxUnsentBytes) return false;
    closeTooSlow(state, { unsent });
    return true;
  };
  const maxQueued = maxQueuedEvents(options.limits);

  /** Ends a socket whose key no longer authenticates; graphql-ws then ends its subscriptions. */
  const forbid = (state: SocketState, reason: string) => state.socket.close(CLOSE_FORBIDDEN, `Forbidden: ${reason}`);

  /**
   * A socket is authenticated once, when it connects; its key is read again on an interval (one
   * query for all open sockets) so that disabling, revoking or expiring it ends the socket too.
   * Limits an admin changed meanwhile apply from then on.
   */
  let rechecking = false;
  const recheckKeys = async () => {
    if (rechecking || !sockets.size) return;
    rechecking = true;
    try {
      const open = [...sockets.values()];
      const keys = await new IdentityService(options.identityOrm.em.fork()).keysById(open.flatMap((state) => (state.key ? [state.key.id] : [])));
      // Sockets of dashboard sessions end with their session (signed out, everywhere too, or expired).
      const sessionIds = open.flatMap((state) => (state.sessionId ? [state.sessionId] : []));
      const live = options.sessions && sessionIds.length ? await options.sessions.service().liveSessionIds(sessionIds) : new Set<string>();
      const now = new Date();
      for (const state of open) {
        if (!state.key) {
          if (state.sessionId && !live.has(state.sessionId)) forbid(state, 'not_signed_in');
          continue;
        }
        const fresh = keys.get(state.key.id);
        const reason = keyRefusal(fresh, now);
        if (!fresh || reason) forbid(state, reason ?? 'invalid_key');
        else state.key = fresh;
      }
    } catch (error) {
      options.logger.warn({ err: error }, 'could not check the keys of open websockets again');
    } finally {
      rechecking = false;
    }
  };
  const recheckTimer = setInterval(() => void recheckKeys(), options.limits.keyRecheckMs);
  recheckTimer.unref();

  /**
   * The instance's bound on unsent bytes, over all its sockets: each socket's own bound
   * (maxUnsentBytes) times thousands of sockets is more memory than an instance has, and many
   * clients can fall behind at once (a network between them and the edge that slows down). Added
   * up on an interval, not on every write: a sum over every open socket is cheap once a second
   * and not once per event. Past the bound, the sockets with the most unsent are closed as too slow,
   * largest first, until what the others hold fits; nothing more is written to them, and ws frees
   * what they hold once their client reads the close, or at its close timeout.
   */
  const sweepUnsent = () => {
    let total = 0;
    const behind: { state: SocketState; unsent: number }[] = [];
    for (const state of sockets.values()) {
      if (state.socket.readyState !== state.socket.OPEN) continue;
      const unsent = state.socket.bufferedAmount;
      if (unsent === 0) continue;
      total += unsent;
      behind.push({ state, unsent });
    }
    if (total <= options.limits.maxUnsentTotalBytes) return;
    behind.sort((a, b) => b.unsent - a.unsent);
    const instanceUnsent = total;
    for (const { state, unsent } of behind) {
      if (total <= options.limits.maxUnsentTotalBytes) break;
      closeTooSlow(state, { unsent, instanceUnsent });
      total -= unsent;
    }
  };
  const sweepTimer = setInterval(sweepUnsent, options.limits.unsentSweepMs ?? 1000);
  sweepTimer.unref();

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

  /** A failed authentication counts in the client address's window, as over HTTP, so keys cannot be guessed over sockets either. */
  const refuseConnection = async (socket: WebSocket, address: string | undefined, reason: string) => {
    const windows = options.edge.windows(undefined, undefined, address);
    const breach = windows.length ? (await options.limiter.hit(windows)).find((state) => state.exceeded) : undefined;
    if (breach) socket.close(CLOSE_TOO_MANY_REQUESTS, `Too many requests: ${options.edge.exceeded(breach.window).code}`);
    else socket.close(CLOSE_UNAUTHORIZED, reason);
    return false;
  };

  const server = useServer<Record<string, unknown>, { state?: SocketState }>(
    {
      schema: options.executor.schema,
      onConnect: async (ctx) => {
        const secret = bearer(ctx.connectionParams);
        const socket = ctx.extra.socket;
        // The same address Express gives req.ip (no proxy is trusted).
        const address = ctx.extra.request.socket.remoteAddress;
        if (!secret) {
          const viaSession = await options.sessions?.authenticateSocket(ctx.extra.request, ctx.connectionParams);
          if (!viaSession) return refuseConnection(socket, address, 'Unauthorized: send {"authorization": "Bearer <API key>"} in connectionParams');
          if (!viaSession.ok) {
            if (viaSession.error.status !== 401) {
              socket.close(CLOSE_FORBIDDEN, `Forbidden: ${viaSession.error.code}`);
              return false;
            }
            return refuseConnection(socket, address, `Unauthorized: ${viaSession.error.code}`);
          }
          if (socket.readyState !== socket.OPEN) return false;
          connections += 1;
          sockets.set(socket, {
            socket,
            principal: viaSession.principal,
            sessionId: viaSession.session.id,
            upstream: new UpstreamClients(options.subgraphUrls, viaSession.principal, options.internalSecret),
            subscriptions: 0,
            requestId: `ws_${connections}_${Date.now().toString(36)}`,
          });
          return true;
        }
        const result = await new IdentityService(options.identityOrm.em.fork(), { keyCache: options.keyCache }).authenticate(secret);
        if (!result.ok) return refuseConnection(socket, address, `Unauthorized: ${result.reason}`);
        // A client that hung up while its key was read has had its onClose already: registering
        // it now would keep the entry, its upstream clients and its key's re-checks for good.
        if (socket.readyState !== socket.OPEN) return false;
        connections += 1;
        sockets.set(socket, {
          socket,
          principal: result.principal,
          key: result.key,
          upstream: new UpstreamClients(options.subgraphUrls, result.principal, options.internalSecret),
          subscriptions: 0,
          requestId: `ws_${connections}_${Date.now().toString(36)}`,
        });
        return true;
      },
      onSubscribe: guarded(
        'an operation over a websocket failed before it ran',
        (ctx: HookContext, id: string, _payload: SubscribePayload) => `${sockets.get(ctx.extra.socket)?.requestId}:${id}`,
        (errors) => errors,
        async (ctx: HookContext, id: string, payload: SubscribePayload) => {
          const state = sockets.get(ctx.extra.socket);
          if (!state) return refuse('Not connected', 'UNAUTHENTICATED', 'missing_api_key');
          const expired = state.key && keyRefusal(state.key);
          if (expired) {
            forbid(state, expired);
            return refuse('The API key no longer authenticates', 'UNAUTHENTICATED', expired);
          }
          // Every operation over the socket counts like one HTTP request with its key, in the same windows.
          const windows = options.edge.windows(state.principal, state.key, undefined);
          const breach = (await options.limiter.hit(windows)).find((w) => w.exceeded);
          if (breach) {
            const exceeded = options.edge.exceeded(breach.window);
            return refuse(exceeded.message, 'RATE_LIMITED', exceeded.code);
          }
          // Refused before anything walks them: the subgraph fetch serialises variables recursively.
          if (nestsDeeperThan(payload.variables, options.jsonMaxDepth) || nestsDeeperThan(payload.extensions, options.jsonMaxDepth)) {
            return [tooDeepGraphQLError(options.jsonMaxDepth)];
          }
          let document = validated.get(payload.query);
          if (document) {
            // Most recently used last, so the oldest is the first to go.
            validated.delete(payload.query);
            validated.set(payload.query, document);
          } else {
            try {
              document = parse(payload.query, { maxTokens: options.maxTokens });
            } catch (error) {
              return refuse((error as Error).message, 'GRAPHQL_PARSE_FAILED', 'invalid_query');
            }
            const errors = validate(options.executor.schema, document, rules);
            if (errors.length) return errors.map((error) => withCode(error, 'GRAPHQL_VALIDATION_FAILED'));
            if (validated.size >= VALIDATED_DOCUMENTS) validated.delete(validated.keys().next().value!);
            validated.set(payload.query, document);
          }
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
        },
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
      subscribe: guarded('a subscription over a websocket failed to start', requestIdOf, (errors) => ({ errors }), async (args: ExecutionArgs) => {
        const { socket: state, operationId, ...context } = args.contextValue as SocketContext;
        // Closed while the operation waited for the limiter: its upstream clients are disposed,
        // and taking one now would keep a shared upstream connection that no one lets go.
        if (!sockets.has(state.socket)) return { errors: refuse('The connection is closed', 'BAD_REQUEST', 'socket_closed') };
        if (state.subscriptions >= options.limits.perSocket) {
          return { errors: refuse(`At most ${options.limits.perSocket} subscriptions per connection`, 'BAD_REQUEST', 'too_many_subscriptions') };
        }
        if (active >= options.limits.perInstance) {
          return { errors: refuse('This instance serves no more subscriptions now; retry on another', 'SERVICE_UNAVAILABLE', 'too_many_subscriptions') };
        }
        const planned = options.executor.plan(args.document, args.operationName ?? undefined);
        const variables = (args.variableValues ?? {}) as Record<string, unknown>;
        const sent = Object.fromEntries((planned.primary.variableUsages ?? []).filter((name) => name in variables).map((name) => [name, variables[name]]));
        const upstreamPayload = {
          query: planned.primary.operation,
          variables: sent,
          operationName: planned.primary.operationName,
          // The subgraph logs and masks its own internal errors under the edge's request id.
          extensions: { requestId: context.requestId },
        };
        let ended = false;
        /** Whether the key expired since the last check: the socket ends before another event goes out. */
        const keyExpired = () => {
          const expired = state.key && keyRefusal(state.key);
          if (expired) forbid(state, expired);
          return Boolean(expired);
        };
        /** The client's result for an event that is not passed through as it is. */
        const resolved = async (event: ExecutionResult) =>
          // The plan merges other subgraphs' fields into the event's objects, which a grouped
          // frame shares between subscriptions (grouped-frames.ts): it gets its own copy.
          clientErrors(await planned.resolveEvent(structuredClone(event), context, variables), context.requestId, options.logger);

        const direct = planned.passthrough ? writeDirectly() : undefined;
        // A relayed event waits for graphql-ws's loop, which waits for each write to the client.
        const backlog = {
          max: maxQueued,
          exceeded: (queued: number) => {
            if (state.socket.readyState === state.socket.OPEN) closeTooSlow(state, { queued });
            void end();
          },
        };
        const upstream = upstreamStream(state.upstream.for(planned.primary.serviceName), upstreamPayload, direct?.deliver, backlog);
        state.subscriptions += 1;
        active += 1;
        /** Counts the subscription out once and ends its upstream operation. */
        const end = async () => {
          if (ended) return;
          ended = true;
          state.subscriptions -= 1;
          active -= 1;
          await upstream.return();
        };
        /**
         * A failure's result, the subscription's last: `next` with the error, then graphql-ws's
         * `complete`. Thrown instead, graphql-ws answers `error` and then `complete` as well, and
         * its client releases the operation twice: a lazy client then closes the socket under the
         * subscriptions still running on it. Nothing is sent once the client completed.
         */
        const lastResult = async (error: () => GraphQLError): Promise<IteratorResult<ExecutionResult>> => {
          const endedElsewhere = ended;
          await end();
          return endedElsewhere ? { value: undefined, done: true } : { value: { errors: [error()] }, done: false };
        };
        /** Each event through graphql-ws's loop, completed by the plan. */
        const relay = async (): Promise<IteratorResult<ExecutionResult>> => {
          if (ended) return { value: undefined, done: true };
          let step: IteratorResult<ExecutionResult>;
          try {
            step = await upstream.next();
          } catch (error) {
            return lastResult(() => upstreamFailure(error, context.requestId, options.logger));
          }
          if (step.done) {
            await end();
            return step;
          }
          if (keyExpired()) {
            await end();
            return { value: undefined, done: true };
          }
          try {
            return { value: await resolved(step.value), done: false };
          } catch (error) {
            return lastResult(() => internalError(error, context.requestId, options.logger, 'a subscription event failed'));
          }
        };
        // The client's `complete` ends the upstream at once (a pending next() settles as done).
        return {
          [Symbol.asyncIterator]() {
            return this;
          },
          next: direct?.finish ?? relay,
          return: async () => {
            await end();
            return { value: undefined, done: true };
          },
          throw: async (error: unknown) => {
            await end();
            throw error;
          },
        };

        /**
         * A subscription whose events are the client's answer as they come (passthrough): each
         * event is written to the client's socket as it arrives (`deliver`), not relayed through
         * graphql-ws's loop (an iterator step, an await and a stringify per subscriber and event,
         * measurable with thousands of subscribers of one channel). graphql-ws's loop only waits
         * for the end (`finish`), so its last frames follow every event. An event with errors goes
         * through the plan, as before; events after it wait for it, so the order holds.
         */
        function writeDirectly() {
          /** An event that failed in the plan ends the subscription with its error (lastResult); nothing after it is written. */
          let failedWith: { error: unknown } | undefined;
          let failure: ((error: unknown) => void) | undefined;
          const failed = new Promise<never>((_, reject) => (failure = reject));
          failed.catch(() => {});
          let behind: Promise<void> | undefined;
          const write = (frame: string) => {
            if (!ended && !failedWith && !unwritable(state)) state.socket.send(frame);
          };
          const deliver = (event: ExecutionResult) => {
            if (ended) return;
            if (keyExpired()) return void end();
            if (!behind && event.data && !event.errors?.length) return write(nextFrame(operationId, passedThroughJson(event)));
            const mine: Promise<void> = (behind ?? Promise.resolve())
              .then(async () => {
                if (ended) return;
                write(nextFrame(operationId, event.data && !event.errors?.length ? passedThroughJson(event) : JSON.stringify(await resolved(event))));
              })
              .catch((error: unknown) => {
                failedWith ??= { error };
                failure!(error);
              })
              .finally(() => {
                if (behind === mine) behind = undefined;
              });
            behind = mine;
          };
          const finish = async (): Promise<IteratorResult<ExecutionResult>> => {
            // Asked again after a failure's result (lastResult): nothing follows it.
            if (ended) return { value: undefined, done: true };
            // Settles when the upstream ends (done or its error), an event fails, or end() ran.
            let outcome: { error: unknown } | undefined;
            try {
              await Promise.race([upstream.next(), failed]);
            } catch (error) {
              outcome = { error };
            }
            // Events already on their way through the plan are written before graphql-ws's last
            // frame. Not after the client's complete: graphql-ws has let the id go, and the client
            // may reuse it meanwhile; nothing more is written for this subscription anyway.
            if (!ended) await behind;
            if (failedWith) return lastResult(() => internalError(failedWith!.error, context.requestId, options.logger, 'a subscription event failed'));
            if (outcome) return lastResult(() => upstreamFailure(outcome!.error, context.requestId, options.logger));
            await end();
            return { value: undefined, done: true };
          };
          return { deliver, finish };
        }
      }) as never,
      onClose: async (ctx) => {
        const state = sockets.get(ctx.extra.socket);
        sockets.delete(ctx.extra.socket);
        await state?.upstream.dispose();
      },
    },
    wss,
    options.limits.keepAliveMs,
  );

  return {
    dispose: async () => {
      clearInterval(recheckTimer);
      clearInterval(sweepTimer);
      await server.dispose();
    },
    activeSubscriptions: () => active,
    openSockets: () => sockets.size,
  };
}
