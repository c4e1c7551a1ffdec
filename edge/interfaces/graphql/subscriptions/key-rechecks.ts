import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { IdentityService, keyRefusal } from '../../../../identity/identity.service.js';
import type { SessionAuthenticator } from '../../../access/session-auth.js';
import { OpenSockets } from './socket-state.js';

/**
 * A socket is authenticated once, when it connects; its key is read again on an interval (one
 * query for all open sockets) so that disabling, revoking or expiring it ends the socket too.
 * Limits an admin changed meanwhile apply from then on. Sockets of dashboard sessions end with
 * their session (signed out, everywhere too, or expired).
 */
export class KeyRechecks {
  private running = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly open: OpenSockets,
    private readonly identityOrm: MikroORM,
    private readonly sessions: SessionAuthenticator | undefined,
    private readonly logger: Logger,
    intervalMs: number,
  ) {
    this.timer = setInterval(() => void this.recheck(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async recheck(): Promise<void> {
    if (this.running || !this.open.states.size) return;
    this.running = true;
    try {
      const open = [...this.open.states.values()];
      const keys = await new IdentityService(this.identityOrm.em.fork()).keysById(open.flatMap((state) => (state.key ? [state.key.id] : [])));
      const sessionIds = open.flatMap((state) => (state.sessionId ? [state.sessionId] : []));
      const live = this.sessions && sessionIds.length ? await this.sessions.service().liveSessionIds(sessionIds) : new Set<string>();
      const now = new Date();
      for (const state of open) {
        if (!state.key) {
          if (state.sessionId && !live.has(state.sessionId)) OpenSockets.forbid(state, 'not_signed_in');
          continue;
        }
        const fresh = keys.get(state.key.id);
        const reason = keyRefusal(fresh, now);
        if (!fresh || reason) OpenSockets.forbid(state, reason ?? 'invalid_key');
        else state.key = fresh;
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'could not check the keys of open websockets again');
    } finally {
      this.running = false;
    }
  }
}
