/** A supervised process that exited before it said it was ready (its own output says why). */
export class ServiceExitedError extends Error {
  readonly code = 'SERVICE_EXITED';

  constructor(
    readonly service: string,
    readonly exitCode: number | null,
    readonly signal: NodeJS.Signals | null,
  ) {
    super(`${service} exited before it was ready (${describeExit(exitCode, signal)})`);
    this.name = 'ServiceExitedError';
  }
}

/** "exit code 1" or "signal SIGKILL", as logs and messages say it. */
export function describeExit(exitCode: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `signal ${signal}` : `exit code ${exitCode}`;
}
