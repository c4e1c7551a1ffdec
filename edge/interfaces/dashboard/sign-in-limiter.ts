import type { LimitWindow, RateLimiter } from '../../access/rate-limiter.js';
import { DashboardApiError } from '../../access/dashboard-api.error.js';

const WINDOW_SECONDS = 15 * 60;

export interface SignInLimits {
  perAddress: number;
  failuresPerEmail: number;
}

/** 429 too_many_attempts; Retry-After says when the window that refused ends. */
export class TooManyAttemptsError extends DashboardApiError {
  constructor(readonly retryAfter: number) {
    super(429, 'too_many_attempts', `Too many sign-in attempts; try again in ${retryAfter} seconds`);
  }
}

/**
 * Sign-in attempts in the edge's rate-limit windows (shared across instances with Redis): every
 * attempt counts per client address, failures count per email, so one address cannot try many
 * passwords and many addresses cannot try many passwords of one person.
 */
export class SignInLimiter {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly limits: SignInLimits,
  ) {}

  private addressWindow(address: string | undefined): LimitWindow {
    return { name: 'signin-address', seconds: WINDOW_SECONDS, limit: this.limits.perAddress, subject: `ip:${address || 'unknown'}` };
  }

  private emailWindow(email: string): LimitWindow {
    return { name: 'signin-email', seconds: WINDOW_SECONDS, limit: this.limits.failuresPerEmail, subject: `email:${email.trim().toLowerCase()}` };
  }

  /** Counts an attempt from the address; throws while the address or the email has used its window up. */
  async admit(address: string | undefined, email: string): Promise<void> {
    const [byAddress] = await this.limiter.hit([this.addressWindow(address)]);
    if (byAddress.exceeded) throw new TooManyAttemptsError(byAddress.retryAfter);
    const byEmail = await this.limiter.peek(this.emailWindow(email));
    if (byEmail.count >= byEmail.window.limit) throw new TooManyAttemptsError(byEmail.retryAfter);
  }

  async failed(email: string): Promise<void> {
    await this.limiter.hit([this.emailWindow(email)]);
  }
}
