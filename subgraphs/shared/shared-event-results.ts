import {
  createSourceEventStream,
  execute,
  getOperationAST,
  Kind,
  print,
  visit,
  type ExecutionArgs,
  type ExecutionResult,
  type FieldNode,
} from 'graphql';
import { principalId } from '../../core/principal.js';
import type { SubgraphContext } from './context.js';
import { InOrder, PUSH, pushOf, type PushableStream, type Sink } from './push-stream.js';

/**
 * The field extension a subscription root declares (type-graphql: `@Extensions({ [EVENT_IS_ROOT]: true })`)
 * when its resolver returns the event it receives as it is, whatever its arguments and context:
 * the arguments only choose which events reach a subscriber (its subscribe function checks
 * them per event). Only then can one execution of an event serve every subscriber below.
 */
export const EVENT_IS_ROOT = 'eventIsRoot';

type Subscribed = PushableStream<ExecutionResult> | ExecutionResult;
type Shared = ExecutionResult | Promise<ExecutionResult>;

/** Results by event object, then by what decides them (sharingKey): gone with the event. */
const resultsByEvent = new WeakMap<object, Map<string, Shared>>();

/**
 * What a subscriber's result for an event depends on, or undefined when it is not shared:
 * the document (one root field declaring EVENT_IS_ROOT, no fragments, no directive on the
 * root), the principal (every resolver below scopes its reads by it) and the values of the
 * variables used below the root field. The root field's own arguments (which channel, acting
 * as which member) are left out: they decided whether the event reached this subscriber.
 */
function sharingKey(args: ExecutionArgs): string | undefined {
  const operation = getOperationAST(args.document, args.operationName);
  if (!operation || operation.operation !== 'subscription' || args.document.definitions.length !== 1) return undefined;
  const [root, ...others] = operation.selectionSet.selections;
  if (!root || others.length || root.kind !== Kind.FIELD || root.directives?.length) return undefined;
  const field = args.schema.getSubscriptionType()?.getFields()[root.name.value];
  if (!field?.extensions?.[EVENT_IS_ROOT]) return undefined;
  const principal = (args.contextValue as Partial<SubgraphContext> | undefined)?.principal;
  if (!principal) return undefined;
  const used = new Set<string>();
  if (root.selectionSet) visit(root.selectionSet, { Variable: (node) => void used.add(node.name.value) });
  const variables = (args.variableValues ?? {}) as Record<string, unknown>;
  const values = [...used].sort().map((name) => [name, variables[name] ?? null]);
  // The variables' definitions are part of the printed document, so a default applies alike.
  return `${principalId(principal)}\u0000${print(withoutArguments(operation.selectionSet.selections[0] as FieldNode, args))}\u0000${JSON.stringify(values)}`;
}

/** The document with the root field's arguments dropped: they differ between subscribers that share. */
function withoutArguments(root: FieldNode, args: ExecutionArgs) {
  return visit(args.document, { Field: (node) => (node === root ? { ...node, arguments: [] } : undefined) });
}

/** What runs before each execution of an event with a given operation context (beforeEachExecution). */
const beforeExecution = new WeakMap<object, () => void>();

/**
 * Runs `hook` before each execution of an event with `context`, its operation's context: the chat
 * starts each event's field resolution from an empty identity map and fresh loaders. Here, not
 * in the stream: a pushed stream hands over its next event while the previous one's execution
 * may still be resolving fields, and the next execution starts only once that one is done.
 */
export function beforeEachExecution(context: object, hook: () => void): void {
  beforeExecution.set(context, hook);
}

/**
 * graphql-ws's `subscribe` for a subgraph: graphql-js's own (a source stream per subscriber, one
 * execution per event), except that subscribers whose result for an event cannot differ (see
 * sharingKey) share one execution of it. A thousand members on one chat channel used to run a
 * thousand executions of the same message (graphql-js and type-graphql's argument handling), one
 * per subscriber, on every message. Each subscriber's frame is still serialised on its own.
 */
export async function subscribeSharingEvents(args: ExecutionArgs): Promise<Subscribed> {
  const source = await createSourceEventStream(args);
  if (!(Symbol.asyncIterator in source)) return source as ExecutionResult;
  const key = sharingKey(args);
  const events = source[Symbol.asyncIterator]();
  const run = (event: unknown): Shared => {
    const context = args.contextValue as object | undefined;
    if (context) beforeExecution.get(context)?.();
    return execute({ ...args, rootValue: event });
  };
  const resultOf = (event: unknown): Shared => {
    if (!key || typeof event !== 'object' || event === null) return run(event);
    let byKey = resultsByEvent.get(event);
    if (!byKey) resultsByEvent.set(event, (byKey = new Map()));
    let result = byKey.get(key);
    if (!result) byKey.set(key, (result = run(event)));
    return result;
  };
  let ended = false;
  // Not an async generator: one waiting for the next event would see return() only when that
  // event came, keeping the subscriber's listener after graphql-ws completed it.
  const mapped: PushableStream<ExecutionResult> = {
    async next() {
      const step = await events.next();
      return step.done ? { done: true, value: undefined } : { done: false, value: await resultOf(step.value) };
    },
    async return() {
      ended = true;
      await events.return?.();
      return { done: true, value: undefined };
    },
    async throw(error?: unknown) {
      ended = true;
      await events.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return mapped;
    },
  };
  const push = pushOf<unknown>(source);
  if (push) {
    // Pushed on as they come: each result in its event's order, and the end after the last.
    mapped[PUSH] = (sink: Sink<ExecutionResult>) => {
      const order = new InOrder();
      const stop = (after: () => void) => {
        if (ended) return;
        ended = true;
        after();
      };
      const failed = (error: unknown) =>
        stop(() => {
          void events.return?.();
          sink.fail(error);
        });
      push({
        // Nothing runs for a subscription already ended: its executions would read for no one.
        next: (event) => order.add(() => (ended ? undefined : resultOf(event)), (result) => void (ended || !result || sink.next(result)), failed),
        end: () => order.add(() => undefined, () => stop(() => sink.end()), failed),
        fail: (error) => order.add(() => undefined, () => failed(error), failed),
      });
    };
  }
  return mapped;
}
