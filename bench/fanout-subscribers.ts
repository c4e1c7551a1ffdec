/**
 * A share of bench/chat-fanout's subscribers, in a worker thread of their own: one graphql-ws
 * socket each, on the channel the bench made. The bench's subscribers stand for separate people
 * on separate machines; in one thread, the 1,000th subscriber's receipt waited for 999 others'
 * parsing, and one garbage collection of that thread's heap (40 to 160 ms, it holds every
 * socket) delayed a whole message for everyone. Shares in threads keep each heap small and let
 * one thread's pause delay only its own share. Each receipt is timed with Date.now(), the clock
 * the bench's send times come from.
 *
 * workerData: `{ subscribers: { index, member, wsUrl }[], secret, channel, pauseEvery }`.
 * Posts: `{ type: 'ready', index }` on a subscriber's first warm-up message, `{ type: 'failed',
 * message }` when a subscription ends early, `{ type: 'delivered', count }` as timed messages
 * arrive (at most every 50 ms). Answers `'report'` with `{ type: 'report', byMessage, pauses }`
 * (the timed latencies by message text; this thread's garbage-collection pauses as [end, ms]),
 * and `'close'` with `{ type: 'closed' }` once every socket is closed.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

interface Share {
  subscribers: { index: number; member: string; wsUrl: string }[];
  secret: string;
  channel: string;
  /** Pause 100 ms after this many sockets: the shares together open as one client did before. */
  pauseEvery: number;
}
const { subscribers, secret, channel, pauseEvery } = workerData as Share;
const port = parentPort!;

/** This thread's collections, so the bench can say how much of a latency was its own. */
const pauses: [number, number][] = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) pauses.push([Date.now(), entry.duration]);
}).observe({ entryTypes: ['gc'] });

/**
 * What else graphql-ws ends a subscription with: a CloseEvent (code and reason) or the socket's
 * ErrorEvent (its message, and the error under it, ECONNRESET say), named by its kind.
 */
function describeEnd(error: unknown): string {
  const event = error as { constructor?: { name?: string }; type?: string; code?: number; reason?: string; message?: string; error?: { code?: string; message?: string } };
  const kind = event?.constructor?.name ?? typeof error;
  if (typeof event?.code === 'number') return `${kind} ${event.code} ${event.reason ?? ''}`.trim();
  const cause = event?.error ? ` (${event.error.code ?? ''} ${event.error.message ?? ''})` : '';
  return `${kind} ${event?.type ?? ''} ${event?.message ?? ''}${cause}`.replace(/\s+/g, ' ').trim();
}

/** graphql-ws ends a subscription with an Error, a CloseEvent (code and reason) or the operation's GraphQL errors. */
function failed(error: unknown): void {
  const message =
    error instanceof Error
      ? error.message
      : Array.isArray(error)
        ? error.map((e: { message?: string; extensions?: { code?: string } }) => `${e.extensions?.code ?? ''} ${e.message ?? ''}`.trim()).join('; ')
        : describeEnd(error);
  port.postMessage({ type: 'failed', message });
}

const byMessage = new Map<string, number[]>();
let delivered = 0;
let posted = 0;
const ready = new Set<number>();
const clients: Client[] = [];
const unsubscribers: (() => void)[] = [];

// Counts go to the bench in batches: a message per delivery would cost more than the delivery.
const counter = setInterval(() => {
  if (delivered !== posted) port.postMessage({ type: 'delivered', count: (posted = delivered) });
}, 50);

for (const [n, { index, member, wsUrl }] of subscribers.entries()) {
  const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${secret}` }, retryAttempts: 0 });
  clients.push(client);
  // A sink, as Apollo Client's GraphQLWsLink and urql subscribe, not graphql-ws's async iterator:
  // an iterator's promise and await per message would be a cost of the bench, not of the platform.
  unsubscribers.push(
    client.subscribe<{ messageAdded: { text: string } }>(
      { query: 'subscription($me: ID!, $c: ID!) { messageAdded(asMember: $me, channelId: $c) { text } }', variables: { me: member, c: channel } },
      {
        next: (result) => {
          const text = result.data?.messageAdded.text;
          if (text === undefined) return;
          if (text === 'warm-up') {
            if (!ready.has(index)) port.postMessage({ type: 'ready', index });
            ready.add(index);
          } else {
            const latency = Date.now() - Number(text);
            const all = byMessage.get(text);
            if (all) all.push(latency);
            else byMessage.set(text, [latency]);
            delivered += 1;
          }
        },
        error: failed,
        complete: () => {},
      },
    ),
  );
  // Opened in steps, so the edge's key checks and upstream connections are not one burst.
  if (n % pauseEvery === pauseEvery - 1) await new Promise((r) => setTimeout(r, 100));
}

port.on('message', async (command: string) => {
  if (command === 'report') {
    port.postMessage({ type: 'report', byMessage: [...byMessage.entries()], pauses });
  } else if (command === 'close') {
    clearInterval(counter);
    for (const unsubscribe of unsubscribers) unsubscribe();
    await Promise.all(clients.map((client) => client.dispose()));
    port.postMessage({ type: 'closed' });
    port.close();
  }
});
