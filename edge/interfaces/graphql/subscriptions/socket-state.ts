import type { Context } from 'graphql-ws';
import type { Extra } from 'graphql-ws/use/ws';
import type { WebSocket } from 'ws';
import type { ApiKey } from '../../../../identity/api-key.entity.js';
import type { EdgeContext } from '../../../../core/edge-context.js';
import type { Principal } from '../../../../core/principal.js';
import type { UpstreamClients } from './upstream-clients.js';

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

/** One authenticated socket: who it is, how it authenticated, its upstream clients and its subscriptions. */
export interface SocketState {
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
export type HookContext = Context<Record<string, unknown>, Extra & { state?: SocketState }>;

/** An operation's context over the socket: the edge's, plus the socket it came on and the operation's id on it. */
export interface SocketContext extends EdgeContext {
  socket: SocketState;
  operationId: string;
}

/** The sockets a server tracks, and its count of running subscriptions. */
export class OpenSockets {
  readonly states = new Map<WebSocket, SocketState>();
  /** Subscriptions running on this instance, over all its sockets. */
  active = 0;

  /** Ends a socket whose key or session no longer authenticates; graphql-ws then ends its subscriptions. */
  static forbid(state: SocketState, reason: string): void {
    state.socket.close(CLOSE_FORBIDDEN, `Forbidden: ${reason}`);
  }
}
