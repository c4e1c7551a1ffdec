import type { MikroORM } from '@mikro-orm/postgresql';
import type { Request, Response } from 'express';

const CHECK_TIMEOUT_MS = 2000;

async function check(probe: () => Promise<unknown>): Promise<'ok' | string> {
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS).unref()),
    ]);
    return 'ok';
  } catch (error) {
    return reasonOf(error);
  }
}

/**
 * What /health says of a failed check: a service that does not accept connections (stopped,
 * crashed, or being restarted by the supervisor) is "unreachable (ECONNREFUSED)", not fetch's
 * bare "fetch failed".
 */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error.cause as NodeJS.ErrnoException | undefined)?.code;
  return code ? `unreachable (${code})` : error.message;
}

/**
 * `/health`: 200 only when the database and every subgraph answer; 503 with the failures
 * otherwise. The database is named `unreachable` and nothing more: its address and the driver's
 * words (which carry it) go to the log.
 */
export function healthHandler(identityOrm: MikroORM, subgraphUrls: Record<string, string>) {
  return async (req: Request, res: Response): Promise<void> => {
    const entries = await Promise.all([
      check(() => identityOrm.em.getConnection().execute('select 1')).then((r) => {
        if (r !== 'ok') req.log?.warn({ reason: r }, 'health: the database does not answer');
        return ['database', r === 'ok' ? r : 'unreachable'] as const;
      }),
      ...Object.entries(subgraphUrls).map(([name, url]) =>
        check(async () => {
          const response = await fetch(new URL('/health', url));
          if (!response.ok) throw new Error(`answered ${response.status}`);
        }).then((r) => [name, r] as const),
      ),
    ]);
    const checks = Object.fromEntries(entries);
    const healthy = entries.every(([, r]) => r === 'ok');
    res.status(healthy ? 200 : 503).json({ status: healthy ? 'ok' : 'unavailable', checks });
  };
}
