import type { ExecutionArgs, ExecutionResult, GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { keyRefusal } from '../../../../identity/identity.service.js';
import type { SubscriptionLimits } from '../../../edge-settings.js';
import type { BackPressure } from './back-pressure.js';
import { clientErrors, internalError, refuse, upstreamFailure } from './socket-errors.js';
import { OpenSockets, type SocketContext } from './socket-state.js';
import type { SubscriptionExecutor } from './subscription-executor.js';
import { upstreamStream } from './upstream-stream.js';

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

/**
 * One subscription's event stream: its primary fetch opened on the
 * owning subgraph over graphql-ws (the socket's upstream clients), each event completed across
 * subgraphs by the plan, or written straight to the client's socket where the event is the
 * client's answer as it came.
 */
export class SubscriptionExecution {
  constructor(
    private readonly open: OpenSockets,
    private readonly executor: SubscriptionExecutor,
    private readonly backPressure: BackPressure,
    private readonly limits: SubscriptionLimits,
    private readonly logger: Logger,
  ) {}

  /** graphql-ws's `subscribe`: the event stream, or the errors that refuse it. */
  async subscribe(args: ExecutionArgs): Promise<AsyncIterableIterator<ExecutionResult> | { errors: readonly GraphQLError[] }> {
    // Named here: the stream's callbacks and writeDirectly below are not methods.
    const { limits, open, backPressure, logger, executor } = this;
    const { socket: state, operationId, ...context } = args.contextValue as SocketContext;
    // Closed while the operation waited for the limiter: its upstream clients are disposed,
    // and taking one now would keep a shared upstream connection that no one lets go.
    if (!open.states.has(state.socket)) return { errors: refuse('The connection is closed', 'BAD_REQUEST', 'socket_closed') };
    if (state.subscriptions >= limits.perSocket) {
      return { errors: refuse(`At most ${limits.perSocket} subscriptions per connection`, 'BAD_REQUEST', 'too_many_subscriptions') };
    }
    if (open.active >= limits.perInstance) {
      return { errors: refuse('This instance serves no more subscriptions now; retry on another', 'SERVICE_UNAVAILABLE', 'too_many_subscriptions') };
    }
    const planned = executor.plan(args.document, args.operationName ?? undefined);
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
      if (expired) OpenSockets.forbid(state, expired);
      return Boolean(expired);
    };
    /** The client's result for an event that is not passed through as it is. */
    const resolved = async (event: ExecutionResult) =>
      // The plan merges other subgraphs' fields into the event's objects, which a grouped
      // frame shares between subscriptions (grouped-frames.ts): it gets its own copy.
      clientErrors(await planned.resolveEvent(structuredClone(event), context, variables), context.requestId, logger);

    const direct = planned.passthrough ? writeDirectly() : undefined;
    // A relayed event waits for graphql-ws's loop, which waits for each write to the client.
    const backlog = {
      max: backPressure.maxQueued,
      exceeded: (queued: number) => {
        if (state.socket.readyState === state.socket.OPEN) backPressure.closeTooSlow(state, { queued });
        void end();
      },
    };
    const upstream = upstreamStream(state.upstream.for(planned.primary.serviceName), upstreamPayload, direct?.deliver, backlog);
    state.subscriptions += 1;
    open.active += 1;
    /** Counts the subscription out once and ends its upstream operation. */
    const end = async () => {
      if (ended) return;
      ended = true;
      state.subscriptions -= 1;
      open.active -= 1;
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
        return lastResult(() => upstreamFailure(error, context.requestId, logger));
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
        return lastResult(() => internalError(error, context.requestId, logger, 'a subscription event failed'));
      }
    };
    // The client's `complete` ends the upstream at once (a pending next() settles as done).
    const stream: AsyncIterableIterator<ExecutionResult> = {
      [Symbol.asyncIterator]() {
        return stream;
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
    return stream;

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
        if (!ended && !failedWith && !backPressure.unwritable(state)) state.socket.send(frame);
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
        if (failedWith) return lastResult(() => internalError(failedWith!.error, context.requestId, logger, 'a subscription event failed'));
        if (outcome) return lastResult(() => upstreamFailure(outcome!.error, context.requestId, logger));
        await end();
        return { value: undefined, done: true };
      };
      return { deliver, finish };
    }
  }
}
