import type { IncomingMessage } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { WebSocket } from 'ws';
import { IdentityService } from '../../../../identity/identity.service.js';
import type { KeyCache } from '../../../../identity/key-cache.js';
import type { ApiKey } from '../../../../identity/api-key.entity.js';
import type { Principal } from '../../../../core/principal.js';
import type { EdgeInterface } from '../../../access/edge-interface.js';
import { parseBearer } from '../../../access/key-windows.js';
import type { RateLimiter } from '../../../access/rate-limiter.js';
import type { SessionAuthenticator } from '../../../access/session-auth.js';
import { UpstreamClients } from './upstream-clients.js';
import { CLOSE_FORBIDDEN, CLOSE_TOO_MANY_REQUESTS, CLOSE_UNAUTHORIZED, type OpenSockets, type SocketState } from './socket-state.js';

export interface SocketAuthenticationOptions {
  identityOrm: MikroORM;
  /** The edge's cache of looked-up keys; the periodic re-checks of open sockets read the store itself. */
  keyCache?: KeyCache;
  /** The dashboard's sessions: a socket without a key may authenticate with the session cookie. */
  sessions?: SessionAuthenticator;
  limiter: RateLimiter;
  edge: EdgeInterface;
  subgraphUrls: Record<string, string>;
  internalSecret: string;
  /** The client's address behind the trusted proxies (TRUST_PROXY), as req.ip is for HTTP. */
  clientAddress(request: IncomingMessage): string | undefined;
}

function bearer(params: Readonly<Record<string, unknown>> | undefined): string | undefined {
  return parseBearer(params?.authorization ?? params?.Authorization ?? (params?.headers as Record<string, unknown> | undefined)?.authorization);
}

/**
 * A socket's one authentication, when it connects: the key in connectionParams (checked like an
 * HTTP request's), or without one the dashboard session's cookie. Either way one state is built,
 * and registered only while the socket is still open.
 */
export class SocketAuthentication {
  private connections = 0;

  constructor(
    private readonly options: SocketAuthenticationOptions,
    private readonly open: OpenSockets,
  ) {}

  /** Whether the socket may go on; a refused one is closed with its reason. */
  async connect(socket: WebSocket, request: IncomingMessage, params: Readonly<Record<string, unknown>> | undefined): Promise<boolean> {
    const secret = bearer(params);
    // The same address Express gives req.ip: limits per address hold across HTTP and websockets.
    const address = this.options.clientAddress(request);
    if (!secret) {
      const viaSession = await this.options.sessions?.authenticateSocket(request, params);
      if (!viaSession) return this.refuse(socket, address, 'Unauthorized: send {"authorization": "Bearer <API key>"} in connectionParams');
      if (!viaSession.ok) {
        if (viaSession.error.status !== 401) {
          socket.close(CLOSE_FORBIDDEN, `Forbidden: ${viaSession.error.code}`);
          return false;
        }
        return this.refuse(socket, address, `Unauthorized: ${viaSession.error.code}`);
      }
      return this.register(socket, viaSession.principal, { sessionId: viaSession.session.id });
    }
    const result = await new IdentityService(this.options.identityOrm.em.fork(), { keyCache: this.options.keyCache }).authenticate(secret);
    if (!result.ok) return this.refuse(socket, address, `Unauthorized: ${result.reason}`);
    return this.register(socket, result.principal, { key: result.key });
  }

  /**
   * A client that hung up while its key or session was read has had its onClose already:
   * registering it now would keep the entry, its upstream clients and its re-checks for good.
   */
  private register(socket: WebSocket, principal: Principal, by: { key?: ApiKey; sessionId?: string }): boolean {
    if (socket.readyState !== socket.OPEN) return false;
    this.connections += 1;
    const state: SocketState = {
      socket,
      principal,
      ...by,
      upstream: new UpstreamClients(this.options.subgraphUrls, principal, this.options.internalSecret),
      subscriptions: 0,
      requestId: `ws_${this.connections}_${Date.now().toString(36)}`,
    };
    this.open.states.set(socket, state);
    return true;
  }

  /** A failed authentication counts in the client address's window, as over HTTP, so keys cannot be guessed over sockets either. */
  private async refuse(socket: WebSocket, address: string | undefined, reason: string): Promise<false> {
    const windows = this.options.edge.windows(undefined, undefined, address);
    const breach = windows.length ? (await this.options.limiter.hit(windows)).find((state) => state.exceeded) : undefined;
    if (breach) socket.close(CLOSE_TOO_MANY_REQUESTS, `Too many requests: ${this.options.edge.exceeded(breach.window).code}`);
    else socket.close(CLOSE_UNAUTHORIZED, reason);
    return false;
  }
}
