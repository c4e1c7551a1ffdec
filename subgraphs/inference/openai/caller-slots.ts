/**
 * Requests in flight per caller (a key, or a client address on the keyless proxy), capped: the
 * spec's "6 parallel requests, exceeding returns 429" for Service I and its proxy. A request over
 * the cap is refused at once; the slot of one that ends, or whose client goes away, is free at
 * once. Counts are per process: several inference instances each allow the cap (see README).
 */
export class CallerSlots {
  private readonly inFlight = new Map<string, number>();

  constructor(readonly limit: number) {}

  count(subject: string): number {
    return this.inFlight.get(subject) ?? 0;
  }

  /** A release function, or null when the caller is at its limit. */
  tryAcquire(subject: string): (() => void) | null {
    const current = this.count(subject);
    if (current >= this.limit) return null;
    this.inFlight.set(subject, current + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.count(subject) - 1;
      // Idle callers leave no entry behind: the map holds only callers with requests in flight.
      if (left <= 0) this.inFlight.delete(subject);
      else this.inFlight.set(subject, left);
    };
  }
}
