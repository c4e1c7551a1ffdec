import { pino, type DestinationStream, type Logger } from 'pino';

/** One structured logger per process; services take children of it named after themselves. */
export function createLogger(level: string, name = 'platform', destination?: DestinationStream): Logger {
  return pino({
    name,
    level,
    // Credentials never reach the log.
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers["x-platform-principal"]', 'req.query.api_key'],
      censor: '[redacted]',
    },
  }, destination);
}
