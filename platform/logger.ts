import { pino, type Logger } from 'pino';

/** One structured logger per process; services take children of it named after themselves. */
export function createLogger(level: string, name = 'platform'): Logger {
  return pino({ name, level });
}
