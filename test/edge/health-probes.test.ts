import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';
import { redisServerMissing, startRedisServer, type RunningRedis } from '../support/redis-server.js';

const missing = redisServerMissing();
if (missing) console.warn(`health-probes tests skipped: ${missing}`);

async function probe(url: string): Promise<{ status: number; body: { status: string; checks?: Record<string, string> } }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.json() };
}

describe.skipIf(missing)('/livez and /readyz on the edge and every subgraph, with Redis configured', () => {
  let redis: RunningRedis;
  let platform: TestPlatform;

  beforeAll(async () => {
    redis = await startRedisServer();
    platform = await startTestPlatform({ redisUrl: redis.url });
  }, 120_000);

  afterAll(async () => {
    await platform?.close();
    await redis?.stop();
  });

  it('are ready while the database, the subgraphs and Redis answer', async () => {
    expect(await probe(`${platform.baseUrl}/livez`)).toMatchObject({ status: 200, body: { status: 'ok' } });
    const ready = await probe(`${platform.baseUrl}/readyz`);
    expect(ready).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(ready.body.checks).toEqual({ database: 'ok', redis: 'ok', membership: 'ok', marketplace: 'ok', inference: 'ok', traceroute: 'ok' });
    for (const url of Object.values(platform.subgraphUrls)) {
      expect(await probe(new URL('/livez', url).href)).toMatchObject({ status: 200 });
      expect(await probe(new URL('/readyz', url).href)).toMatchObject({ status: 200, body: { checks: { database: 'ok', redis: 'ok' } } });
    }
  });

  it('a stopped Redis makes every service unready, /health with them, while /livez stays alive', async () => {
    await redis.stop();
    const ready = await probe(`${platform.baseUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body.status).toBe('unavailable');
    // The edge's own connection, and each subgraph's (their /readyz answers 503).
    expect(ready.body.checks).toMatchObject({ database: 'ok', redis: 'unreachable', membership: 'answered 503', traceroute: 'answered 503' });
    expect((await probe(`${platform.baseUrl}/health`)).status).toBe(503);
    expect(await probe(`${platform.baseUrl}/livez`)).toMatchObject({ status: 200, body: { status: 'ok' } });
    const membership = await probe(new URL('/readyz', platform.subgraphUrls.membership).href);
    expect(membership).toMatchObject({ status: 503, body: { checks: { database: 'ok', redis: 'unreachable' } } });
    expect((await probe(new URL('/livez', platform.subgraphUrls.membership).href)).status).toBe(200);
  });
});
