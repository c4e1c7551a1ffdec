/** When a provider whose calls keep failing is skipped by routing. */
export interface CooldownOptions {
  /** Failures within `windowMs` that start a cooldown. Default 3. */
  allowedFails?: number;
  windowMs?: number;
  /** How long routing skips the provider. Default 30 s. */
  cooldownMs?: number;
}

// LiteLLM's router cools a deployment down after allowed_fails (3) failures within a minute; its
// cooldown is short (5 s in its constants, 60 s in older docs). A local engine or a GPU server
// that failed three times in a minute rarely recovers in 5 s, so 30 s.
export const DEFAULT_COOLDOWN: Required<CooldownOptions> = { allowedFails: 3, windowMs: 60_000, cooldownMs: 30_000 };

/** Recent failures per provider and the cooldowns they started. */
export class ProviderCooldown {
  private readonly failures = new Map<string, number[]>();
  private readonly until = new Map<string, number>();
  private readonly options: Required<CooldownOptions>;

  constructor(
    options: CooldownOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.options = { ...DEFAULT_COOLDOWN, ...options };
  }

  /** Records a failure; true when it starts a cooldown. */
  fail(provider: string): boolean {
    const now = this.now();
    const recent = (this.failures.get(provider) ?? []).filter((at) => now - at < this.options.windowMs);
    recent.push(now);
    if (recent.length < this.options.allowedFails || this.coolingUntil(provider) !== null) {
      this.failures.set(provider, recent);
      return false;
    }
    // The failures that started this cooldown do not count toward the next one.
    this.failures.delete(provider);
    this.until.set(provider, now + this.options.cooldownMs);
    return true;
  }

  /** The end of the provider's cooldown, or null when routing may use it. */
  coolingUntil(provider: string): number | null {
    const until = this.until.get(provider);
    if (until === undefined) return null;
    if (until <= this.now()) {
      this.until.delete(provider);
      return null;
    }
    return until;
  }
}
