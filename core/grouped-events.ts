/**
 * An extension of the graphql-transport-ws protocol between the edge and the subgraphs, and only
 * there: one frame for an event that several subscriptions of one upstream connection receive
 * alike, instead of one `next` frame per subscription. A chat message to a thousand members of
 * one channel was a thousand frames for the subgraph to frame and write and for the edge to read,
 * parse and dispatch, each carrying the same payload.
 *
 * The edge asks for it when it connects (`GROUPED_EVENTS_PARAM: true` in connectionParams); a
 * subgraph sends grouped frames only on a connection that asked, so any other graphql-ws client
 * of a subgraph (a test, a tool) sees the plain protocol. Everything else about a subscription
 * (subscribe, error, complete) stays graphql-ws's own frames.
 */

/** The connectionParams entry the edge sends to receive grouped frames. */
export const GROUPED_EVENTS_PARAM = 'x-grouped-events';

/** The grouped frame's type; its text starts with this, so a reader can tell it apart without parsing. */
export const NEXT_MANY = 'next_many';
export const NEXT_MANY_PREFIX = `{"type":"${NEXT_MANY}",`;

/** `{"type":"next_many","ids":[...],"payload":{...}}`: the payload is each listed subscription's `next`. */
export interface NextManyMessage {
  type: typeof NEXT_MANY;
  ids: string[];
  payload: { data?: unknown; errors?: readonly unknown[]; extensions?: unknown };
}

/** The frame's text: written by hand so that its type comes first (NEXT_MANY_PREFIX). */
export function nextManyFrame(ids: readonly string[], payload: NextManyMessage['payload']): string {
  return `${NEXT_MANY_PREFIX}"ids":${JSON.stringify(ids)},"payload":${JSON.stringify(payload)}}`;
}

/** Reads a grouped frame, or undefined for any other text (graphql-ws's own frames). */
export function readNextMany(text: string): NextManyMessage | undefined {
  if (!text.startsWith(NEXT_MANY_PREFIX)) return undefined;
  const message = JSON.parse(text) as NextManyMessage;
  if (!Array.isArray(message.ids) || typeof message.payload !== 'object' || message.payload === null) throw new Error('Malformed next_many frame');
  return message;
}
