/** The command line itself is wrong (unknown command, unknown or missing flag): exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
