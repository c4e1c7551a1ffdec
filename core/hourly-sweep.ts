const SWEEP_INTERVAL_MS = 60 * 60_000;
const FIRST_SWEEP_MS = 60_000;

/**
 * Runs a retention sweep a minute after the start (not during it), then hourly, one at a time;
 * a failed sweep is reported and tried again at the next hour. The timers do not hold the
 * process open.
 */
export class HourlySweep {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly sweep: () => Promise<unknown>,
    private readonly failed: (error: unknown) => void,
  ) {}

  start(): void {
    if (this.timer) return;
    const run = () => {
      if (this.running) return;
      this.running = this.sweep()
        .catch(this.failed)
        .finally(() => (this.running = null));
    };
    this.timer = setTimeout(() => {
      run();
      this.timer = setInterval(run, SWEEP_INTERVAL_MS);
      this.timer.unref();
    }, FIRST_SWEEP_MS);
    this.timer.unref();
  }

  /** Stops the sweeps and waits for one under way. */
  async close(): Promise<void> {
    // clearTimeout clears an interval too: both are Timeout objects.
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}
