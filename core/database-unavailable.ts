/** What a client is told while the database cannot be reached: nothing of its address or the driver's words. */
export const DATABASE_UNAVAILABLE_MESSAGE = 'The database is unavailable for a moment; retry shortly';

/** Errors of a connection that could not be made or was lost (node's, as the pg driver passes them on). */
const CONNECTION_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * SQLSTATEs of a server that is going away or not yet back: admin_shutdown, crash_shutdown,
 * cannot_connect_now (starting up or in recovery), too_many_connections; class 08 is every
 * connection exception.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** The pg driver's own words for a connection lost or never made (its errors carry no code). */
const DRIVER_MESSAGES = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed and is not queryable)/;

/**
 * Whether `error` says the database cannot be reached now (stopped, restarting, recovering),
 * rather than that it refused a statement: worth a 503 and a retry, not a 500. MikroORM's
 * DriverException copies the driver error's code, so both are recognised.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  // An HTTP error (body-parser's "request aborted" is ECONNABORTED with status 400) is the client's connection, not the database's.
  if (typeof (error as { status?: unknown }).status === 'number' || typeof (error as { type?: unknown }).type === 'string') return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_ERRNOS.has(code) || UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08'))) return true;
  if (DRIVER_MESSAGES.test(error.message)) return true;
  // Node reports a refused connection to every address of a name as one AggregateError.
  return error instanceof AggregateError && error.errors.length > 0 && error.errors.every(isDatabaseUnavailable);
}
