import { ProviderRefusal } from './provider-refusal.js';

/** A request's place on a provider; release it when the request ends (releasing twice does nothing). */
export interface ProviderSlot {
  readonly provider: string;
  release(): void;
}

/**
 * Requests in flight per provider, capped by its maxConcurrency. A request beyond the cap is
 * refused at once (ProviderRefusal 'busy', 429), never queued: the spec answers Service I's
 * seventh parallel request with 429 and gives provider_b a limit of 3, and a queue would only
 * turn the refusal into a timeout the client cannot tell from a slow model.
 */
export class ProviderSlots {
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly limits: ReadonlyMap<string, number | undefined>,
    /** Called when a provider reaches its limit and when it leaves it. */
    private readonly onSaturation: (provider: string) => void = () => {},
  ) {}

  count(provider: string): number {
    return this.inFlight.get(provider) ?? 0;
  }

  /** Takes a slot, or refuses as busy; an abort of `signal` gives the slot back by itself. */
  acquire(provider: string, signal?: AbortSignal): ProviderSlot {
    signal?.throwIfAborted();
    const limit = this.limits.get(provider);
    const current = this.count(provider);
    if (limit !== undefined && current >= limit) {
      throw new ProviderRefusal('busy', `${provider} is serving its limit of ${limit} concurrent requests; try again shortly`, 'provider');
    }
    this.inFlight.set(provider, current + 1);
    if (limit !== undefined && current + 1 === limit) this.onSaturation(provider);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      signal?.removeEventListener('abort', release);
      const before = this.count(provider);
      this.inFlight.set(provider, before - 1);
      if (limit !== undefined && before === limit) this.onSaturation(provider);
    };
    signal?.addEventListener('abort', release, { once: true });
    return { provider, release };
  }
}
