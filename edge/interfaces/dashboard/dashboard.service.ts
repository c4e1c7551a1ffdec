import type { MikroORM } from '@mikro-orm/postgresql';
import type { RateLimits } from '../../edge-settings.js';
import type { AccountUser } from '../../../identity/account-user.entity.js';
import { userView, type UserView } from '../../../identity/account-user.service.js';
import { UsageService, type UsageRange, type UsageReport } from '../../../identity/usage.service.js';
import type { Mode } from '../../../core/principal.js';
import { IdentityService } from '../../../identity/identity.service.js';
import { tracerouteWindows } from '../../access/key-windows.js';
import type { RateLimiter, WindowState } from '../../access/rate-limiter.js';
import { DashboardApiError } from '../../access/dashboard-api.error.js';
import type { SessionAuthenticator } from '../../access/session-auth.js';
import type { SignInLimiter } from './sign-in-limiter.js';
import type { UsageRecorder } from './usage-recorder.js';

export interface AccountView {
  id: string;
  name: string;
  /** Live and test keys count together against one cap per account. */
  keyCap: { max: number; active: number; kinds: ['live', 'test'] };
  limits: { livePerMinute: number; testPerMinute: number };
}

/** A traceroute key's requests in its current windows, against their limits. */
export interface TracerouteKeyUse {
  id: string;
  hourly: { used: number; limit: number; resetAt: string };
  daily: { used: number; limit: number; resetAt: string };
}

export interface SignedIn {
  user: UserView;
  account: AccountView;
  csrfToken: string;
}

/** What the dashboard API's routes do, apart from HTTP: sign-in with its limits, the views, the usage report. */
export class DashboardService {
  constructor(
    private readonly identityOrm: MikroORM,
    readonly sessions: SessionAuthenticator,
    private readonly signIns: SignInLimiter,
    private readonly usage: UsageRecorder,
    private readonly settings: { rateLimits: RateLimits; maxActiveKeysPerAccount: number },
    /** The edge's rate-limit counters, read (never counted) for the traceroute admin area. */
    private readonly limiter?: RateLimiter,
  ) {}

  /**
   * Each traceroute key's use against its hourly and daily windows, read from the counters the
   * edge counts its requests in (in process, the cluster's primary, or Redis), never counted.
   */
  async tracerouteKeyUse(): Promise<{ keys: TracerouteKeyUse[] }> {
    const keys = await new IdentityService(this.identityOrm.em.fork()).listKeys({ kind: 'traceroute' });
    const limiter = this.limiter;
    if (!limiter) return { keys: [] };
    return {
      keys: await Promise.all(
        keys.map(async (key) => {
          const [hourly, daily] = await Promise.all(tracerouteWindows(key.id, key).map((window) => limiter.peek(window)));
          const view = (state: WindowState) => ({ used: state.count, limit: state.window.limit, resetAt: new Date(state.resetAt * 1000).toISOString() });
          return { id: key.id, hourly: view(hourly!), daily: view(daily!) };
        }),
      ),
    };
  }

  /** Checks the limits, then the password; a failure counts against the email. */
  async signIn(email: string, password: string, address: string | undefined): Promise<{ token: string; body: SignedIn }> {
    await this.signIns.admit(address, email);
    const users = this.sessions.service();
    const user = await users.checkCredentials(email, password);
    if (!user) {
      await this.signIns.failed(email);
      throw new DashboardApiError(401, 'invalid_credentials', 'The email or password is not right');
    }
    await users.sweepSessions();
    const { token, session } = await users.startSession(user);
    return { token, body: await this.signedIn(user, session.csrfToken) };
  }

  async signedIn(user: AccountUser, csrfToken: string): Promise<SignedIn> {
    return { user: userView(user), account: await this.account(user), csrfToken };
  }

  private async account(user: AccountUser): Promise<AccountView> {
    const active = await this.sessions.service().activeKeys(user.account.id);
    return {
      id: user.account.id,
      name: user.account.slug,
      keyCap: { max: this.settings.maxActiveKeysPerAccount, active, kinds: ['live', 'test'] },
      limits: { livePerMinute: this.settings.rateLimits.livePerMinute, testPerMinute: this.settings.rateLimits.testPerMinute },
    };
  }

  /** The account's usage; this instance's unflushed counts are written first, so the figures are current here. */
  async usageReport(accountId: string, mode: Mode, range: UsageRange): Promise<UsageReport & { mode: Mode; range: UsageRange; limitPerMinute: number }> {
    await this.usage.flush();
    const report = await new UsageService(this.identityOrm.em.fork()).report(accountId, mode, range);
    return { mode, range, limitPerMinute: mode === 'live' ? this.settings.rateLimits.livePerMinute : this.settings.rateLimits.testPerMinute, ...report };
  }
}
