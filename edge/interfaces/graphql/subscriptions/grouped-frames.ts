import type { ExecutionResult } from 'graphql';
import WebSocket from 'ws';
import { readNextMany } from '../../../../core/grouped-events.js';

/**
 * The edge's side of grouped event frames (core/grouped-events.ts). graphql-ws's client would
 * refuse a frame type it does not know, so the upstream sockets take grouped frames before it
 * sees them and hand the one parsed payload to each listed subscription's listener. Ids are
 * unique in the process (`generateId`), so one table serves every upstream connection; each
 * entry also names the socket its subscription was sent on, and only that socket's frames reach
 * it, as graphql-ws routes its own `next` frames by connection: a subgraph cannot write into a
 * subscription that another connection (another principal's) carries.
 */
interface Listening {
  listener: (payload: ExecutionResult) => void;
  /** The socket the subscribe frame went out on (set by its `send`; a retry moves it). */
  socket?: WebSocket;
}
const listeners = new Map<string, Listening>();
const idsByPayload = new WeakMap<object, string>();
let sequence = 0;

/** graphql-ws's `generateID`: a process-wide sequence, remembered by the payload it was made for. */
export function generateId(payload: object): string {
  sequence += 1;
  const id = sequence.toString(36);
  idsByPayload.set(payload, id);
  return id;
}

/**
 * Routes the grouped frames of the subscription just subscribed with `payload` to `listener`;
 * returns the function that stops it. Every subscription listed in a frame receives the same
 * payload object: a listener must not change it.
 */
export function listenGrouped(payload: object, listener: (payload: ExecutionResult) => void): () => void {
  const id = idsByPayload.get(payload);
  if (id === undefined) return () => {};
  const entry: Listening = { listener };
  listeners.set(id, entry);
  return () => {
    if (listeners.get(id) === entry) listeners.delete(id);
  };
}

/** How many subscriptions are listening for grouped frames in this process (tests check that ended ones let go). */
export function groupedListeners(): number {
  return listeners.size;
}

const setOnMessage = Object.getOwnPropertyDescriptor(WebSocket.prototype, 'onmessage')!.set!;

/**
 * ws's WebSocket whose `onmessage` (the attribute graphql-ws's client sets) sees every frame but
 * the grouped ones. Frames for a subscription that has ended meanwhile, or that another connection
 * carries, are dropped.
 */
export class GroupedEventsWebSocket extends WebSocket {
  constructor(address: string, protocols?: string | string[]) {
    super(address, protocols);
    let handler: ((event: WebSocket.MessageEvent) => void) | null = null;
    Object.defineProperty(this, 'onmessage', {
      configurable: true,
      get: () => handler,
      set: (next: ((event: WebSocket.MessageEvent) => void) | null) => {
        handler = next;
        setOnMessage.call(this, next ? (event: WebSocket.MessageEvent) => this.receive(event, next) : null);
      },
    });
  }

  /**
   * graphql-ws's frames out: a `subscribe` binds its subscription's grouped frames to this
   * socket. graphql-ws writes `{"id":…,"type":…}` in that order; only those frames are read.
   */
  override send(data: unknown, ...rest: unknown[]): void {
    if (typeof data === 'string' && data.startsWith('{"id":') && data.includes('"type":"subscribe"')) {
      try {
        const { id, type } = JSON.parse(data) as { id?: unknown; type?: unknown };
        const entry = typeof id === 'string' && type === 'subscribe' ? listeners.get(id) : undefined;
        if (entry) entry.socket = this;
      } catch {
        // Not JSON: ws sends it as it is, and the subgraph refuses it.
      }
    }
    (super.send as (...args: unknown[]) => void)(data, ...rest);
  }

  private receive(event: WebSocket.MessageEvent, next: (event: WebSocket.MessageEvent) => void): void {
    if (typeof event.data !== 'string') return next(event);
    let message;
    try {
      message = readNextMany(event.data);
    } catch {
      // graphql-ws's own code for a frame it cannot read: its client then ends every subscription.
      this.close(4400, 'Malformed next_many frame');
      return;
    }
    if (!message) return next(event);
    for (const id of message.ids) {
      const entry = listeners.get(id);
      // Ended meanwhile, or not this connection's.
      if (entry?.socket !== this) continue;
      try {
        entry.listener(message.payload as ExecutionResult);
      } catch (error) {
        // One subscription's failure is not the others': they still get the event.
        process.emitWarning(`A grouped event's listener failed: ${(error as Error)?.message ?? String(error)}`);
      }
    }
  }
}
