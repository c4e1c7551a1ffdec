import type { MikroORM } from '@mikro-orm/postgresql';
import type { Request, Response } from 'express';
import type { Redis } from 'ioredis';
import { httpReadiness, readinessOf, type ReadinessProbe } from '../../../core/health/readiness.js';

/**
 * `/readyz` (and `/health`, kept for its users): 200 only when the database, every subgraph and
 * Redis (when configured) answer; 503 with the failures otherwise. The database and Redis are
 * named `unreachable` and nothing more: their addresses and the drivers' words go to the log.
 */
export function readinessHandler(identityOrm: MikroORM, subgraphUrls: Record<string, string>, redis?: Redis) {
  const quiet: Record<string, ReadinessProbe> = {
    database: () => identityOrm.em.getConnection().execute('select 1'),
    ...(redis ? { redis: () => redis.ping() } : {}),
  };
  const subgraphs = Object.fromEntries(Object.entries(subgraphUrls).map(([name, url]) => [name, httpReadiness(url)]));
  return async (req: Request, res: Response): Promise<void> => {
    const { ready, checks } = await readinessOf({ ...quiet, ...subgraphs });
    for (const name of Object.keys(quiet)) {
      if (checks[name] === 'ok') continue;
      req.log?.warn({ reason: checks[name] }, `readiness: ${name} does not answer`);
      checks[name] = 'unreachable';
    }
    res.status(ready ? 200 : 503).json({ status: ready ? 'ok' : 'unavailable', checks });
  };
}

/** `/livez`: the process answers; nothing it depends on is asked, so a database outage restarts nothing. */
export function livenessHandler(_req: Request, res: Response): void {
  res.json({ status: 'ok' });
}
