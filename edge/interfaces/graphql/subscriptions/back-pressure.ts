import type { Logger } from 'pino';
import type { SubscriptionLimits } from '../../../edge-settings.js';
import { CLOSE_TOO_SLOW, type OpenSockets, type SocketState } from './socket-state.js';

/**
 * Events go to each client as they come: without a bound, a client that stops reading makes the
 * edge keep every later event for it, for as long as its socket is open. A socket is bounded by
 * its unsent bytes (maxUnsentBytes) or, for relayed events, by the events queued behind
 * graphql-ws's loop; the instance by the unsent bytes of all its sockets (maxUnsentTotalBytes).
 */
export class BackPressure {
  /**
   * Events a relayed subscription may have waiting behind graphql-ws's loop (which waits for each
   * write to reach the kernel) before its socket counts as too slow: maxUnsentBytes at 1 KiB per
   * event (a relayed event is not serialised until it is written), 1,024 by default.
   */
  readonly maxQueued: number;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly open: OpenSockets,
    private readonly limits: SubscriptionLimits,
    private readonly logger: Logger,
  ) {
    this.maxQueued = Math.max(16, Math.floor(limits.maxUnsentBytes / 1024));
    this.timer = setInterval(() => this.sweep(), limits.unsentSweepMs ?? 1000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Closes a socket whose client has fallen too far behind with 1013, once; nothing more is written to it. */
  closeTooSlow(state: SocketState, behind: { unsent: number; instanceUnsent?: number } | { queued: number }): void {
    this.logger.warn({ requestId: state.requestId, ...behind }, 'closing a websocket whose client reads too slowly');
    const reason =
      'queued' in behind
        ? `Too slow: ${behind.queued} events waiting`
        : `Too slow: ${behind.unsent} bytes unsent${behind.instanceUnsent === undefined ? '' : ", the most of the instance's sockets"}`;
    state.socket.close(CLOSE_TOO_SLOW, reason);
  }

  /** Whether nothing more may be written to the socket: closing, or more than maxUnsentBytes unsent (then closed). */
  unwritable(state: SocketState): boolean {
    if (state.socket.readyState !== state.socket.OPEN) return true;
    const unsent = state.socket.bufferedAmount;
    if (unsent <= this.limits.maxUnsentBytes) return false;
    this.closeTooSlow(state, { unsent });
    return true;
  }

  /**
   * The instance's bound: each socket's own bound times thousands of sockets is more memory than
   * an instance has, and many clients can fall behind at once. Added up on an interval, not on
   * every write. Past the bound, the sockets with the most unsent are closed as too slow, largest
   * first, until what the others hold fits; ws frees what they hold once their client reads the
   * close, or at its close timeout.
   */
  private sweep(): void {
    let total = 0;
    const behind: { state: SocketState; unsent: number }[] = [];
    for (const state of this.open.states.values()) {
      if (state.socket.readyState !== state.socket.OPEN) continue;
      const unsent = state.socket.bufferedAmount;
      if (unsent === 0) continue;
      total += unsent;
      behind.push({ state, unsent });
    }
    if (total <= this.limits.maxUnsentTotalBytes) return;
    behind.sort((a, b) => b.unsent - a.unsent);
    const instanceUnsent = total;
    for (const { state, unsent } of behind) {
      if (total <= this.limits.maxUnsentTotalBytes) break;
      this.closeTooSlow(state, { unsent, instanceUnsent });
      total -= unsent;
    }
  }
}
