import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIdentityStore } from '../../identity/index.js';
import { createLogger } from '../../core/logger.js';
import { startEdgeService } from '../../platform/platform.js';
import type { RunningService } from '../../core/listen.js';
import { startTestPlatform, testConfig, type TestPlatform } from '../support/platform-harness.js';
import { redisServerMissing, startRedisServer, type RunningRedis } from '../support/redis-server.js';

const missing = redisServerMissing();
if (missing) console.warn(`redis-rate-limit tests skipped: ${missing}`);

// Counted by the guard, then answered 404 by the bridge without reaching the graph.
const CHEAP_PATH = '/api/v1/nothing-here';
const defaults = testConfig().rateLimits;

/** One edge as a client sees it: its base URL. */
const baseOf = (service: RunningService) => service.url.replace(/\/graphql$/, '');

async function get(base: string, key: string) {
  const response = await fetch(base + CHEAP_PATH, { headers: { authorization: `Bearer ${key}` } });
  await response.arrayBuffer();
  return {
    status: response.status,
    limit: response.headers.get('x-ratelimit-limit'),
    remaining: response.headers.get('x-ratelimit-remaining'),
  };
}

/** `perEdge` requests to each edge, interleaved, `batch` at a time; the answers by edge. */
async function load(bases: string[], key: string, perEdge: number, batch = 50) {
  const answers = bases.map(() => [] as Awaited<ReturnType<typeof get>>[]);
  const perBatch = batch / bases.length;
  for (let sent = 0; sent < perEdge; sent += perBatch) {
    const round = bases.flatMap((base, edge) =>
      Array.from({ length: Math.min(perBatch, perEdge - sent) }, async () => answers[edge].push(await get(base, key))),
    );
    await Promise.all(round);
  }
  return answers;
}

const admitted = <T extends { status: number }>(answers: T[]) => answers.filter((a) => a.status !== 429);
const refused = <T extends { status: number }>(answers: T[]) => answers.filter((a) => a.status === 429);

describe.skipIf(missing)(`rate limits across gateway instances${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let redis: RunningRedis;
  let platform: TestPlatform;
  let identityOrm: MikroORM;
  const edges: RunningService[] = [];
  const logger = createLogger('silent');

  /** Another edge over the platform's subgraphs and database. */
  const startEdge = async (overrides: Parameters<typeof testConfig>[0]) => {
    const edge = await startEdgeService(testConfig(overrides), identityOrm, platform.subgraphUrls, logger);
    edges.push(edge);
    return baseOf(edge);
  };

  beforeAll(async () => {
    redis = await startRedisServer();
    platform = await startTestPlatform({ redisUrl: redis.url });
    identityOrm = await openIdentityStore(platform.databaseUrl);
  });

  afterAll(async () => {
    for (const edge of edges) await edge.stop();
    await identityOrm?.close(true);
    await platform?.close();
    await redis?.stop();
  });

  it('two instances on one Redis admit 1,000 requests a minute for a live key in total, not each', async () => {
    const second = await startEdge({ redisUrl: redis.url });
    const key = await platform.issueKey('acct-shared', 'live');

    const [first, other] = await load([platform.baseUrl, second], key, 600);
    const all = [...first, ...other];

    expect(all).toHaveLength(1200);
    expect(admitted(all)).toHaveLength(1000);
    expect(refused(all)).toHaveLength(200);
    // Admitted means the bridge answered: nothing failed for another reason.
    expect(new Set(admitted(all).map((a) => a.status))).toEqual(new Set([404]));
    // Both instances refused: each saw the other's requests in the count.
    expect(refused(first).length).toBeGreaterThan(0);
    expect(refused(other).length).toBeGreaterThan(0);
    expect(new Set(all.map((a) => a.limit))).toEqual(new Set(['1000']));
    // One counter: every remaining value from 999 down to 0 was handed out exactly once.
    const remaining = admitted(all).map((a) => Number(a.remaining)).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 1000 }, (_, i) => i));
  });

  it('without Redis each instance counts alone, so two admit twice the limit', async () => {
    const rateLimits = { ...defaults, livePerMinute: 20 };
    const bases = [await startEdge({ rateLimits }), await startEdge({ rateLimits })];
    const key = await platform.issueKey('acct-apart', 'live');

    const answers = await load(bases, key, 30, 10);

    for (const edge of answers) {
      expect(admitted(edge)).toHaveLength(20);
      expect(refused(edge)).toHaveLength(10);
    }
    // The contrast: the same limit on two Redis-backed instances admits 20 in total.
    const shared = [await startEdge({ rateLimits, redisUrl: redis.url }), await startEdge({ rateLimits, redisUrl: redis.url })];
    const sharedKey = await platform.issueKey('acct-shared-small', 'live');
    expect(admitted((await load(shared, sharedKey, 30, 10)).flat())).toHaveLength(20);
  });

  it('keeps answering when Redis goes away, counting in process instead', async () => {
    const key = await platform.issueKey('acct-outage', 'live');
    expect((await get(platform.baseUrl, key)).status).toBe(404);

    await redis.stop();

    const answers = await Promise.all(Array.from({ length: 5 }, () => get(platform.baseUrl, key)));
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(answer.limit).toBe('1000');
    }
    // The in-process fallback starts its own count.
    expect(answers.map((a) => Number(a.remaining)).sort((a, b) => b - a)).toEqual([999, 998, 997, 996, 995]);
  });
});
