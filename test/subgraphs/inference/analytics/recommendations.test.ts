import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inferenceConfigFrom } from '../../../../subgraphs/inference/config/load-inference-config.js';
import { createInferenceSubgraph } from '../../../../subgraphs/inference/index.js';
import type { UsageEntry } from '../../../../subgraphs/inference/usage/usage-entry.js';
import { UsageRecorder } from '../../../../subgraphs/inference/usage/usage-recorder.js';
import type { Subgraph } from '../../../../subgraphs/shared/subgraph.js';
import { createTestDatabase } from '../../../support/database.js';
import { LoopbackOpenAiServer } from '../../../support/loopback-openai-server.js';
import { principalFor, run, TEST_SECRET } from '../../../support/subgraph-harness.js';

/**
 * Recommendations from a real configuration (an upstream listing a text and a vision model, and the
 * OCR engine) and known usage of the last 24 hours: the rank follows the documented rule exactly.
 */
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let upstream: LoopbackOpenAiServer;
let subgraph: Subgraph;
const textKey = principalFor('recommend-text', 'text');

beforeAll(async () => {
  db = await createTestDatabase();
  upstream = await LoopbackOpenAiServer.start('llama.cpp', [
    { id: 'text-model', contextLength: 4096 },
    { id: 'eye-model', contextLength: 4096, vision: true },
  ]);
  const engine = { type: 'openai-upstream', url: upstream.url };
  const config = inferenceConfigFrom(
    {
      providers: [
        { id: 'provider_a', name: 'A', engines: [engine], quality: { default: 'high' } },
        { id: 'provider_b', name: 'B', engines: [engine], models: ['text-model'], quality: { default: 'basic', coding: 'high' } },
        { id: 'provider_c', name: 'C', engines: [engine], models: ['text-model'] },
        { id: 'provider_d', name: 'D', engines: [{ type: 'ocr' }] },
      ],
    },
    null,
  );
  subgraph = await createInferenceSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET, inferenceConfig: config });
  const recorder = new UsageRecorder(subgraph.orm, { logger: pino({ level: 'silent' }) });
  const hourAgo = new Date(Date.now() - 3_600_000);
  const calls = (provider: string, model: string, latencies: number[], status = (_i: number) => 200) =>
    latencies.forEach((latencyMs, i) =>
      recorder.record({ occurredAt: hourAgo, interface: 'gateway', clientAddress: '203.0.113.1', provider, model, promptTokens: 1, completionTokens: 1, latencyMs, streamed: false, status: status(i) } satisfies UsageEntry),
    );
  calls('provider_a', 'text-model', Array(10).fill(1000));
  calls('provider_b', 'text-model', Array(10).fill(250));
  // Half of provider_c's calls failed upstream (fast refusals, which do not count as latency).
  calls('provider_c', 'text-model', [...Array(5).fill(500), ...Array(5).fill(5)], (i) => (i < 5 ? 200 : 502));
  // Too few calls to count, however fast: measured as neutral.
  calls('provider_d', 'ocr-eng', Array(4).fill(1));
  // Older than 24 hours: not measured.
  recorder.record({ occurredAt: new Date(Date.now() - 25 * 3_600_000), interface: 'gateway', provider: 'provider_a', model: 'eye-model', promptTokens: 1, completionTokens: 1, latencyMs: 1, streamed: false, status: 500 });
  await recorder.close();
});

afterAll(async () => {
  await subgraph?.close();
  await upstream?.close();
  await db?.drop();
});

const QUERY = `query($category: String) {
  inferenceRecommendations(category: $category) {
    category description note
    recommendations { rank provider model score qualityTier qualityConfigured calls measured latencyP50Ms errorRate qualityScore latencyScore errorScore why }
  }
}`;

interface Rec {
  rank: number;
  provider: string;
  model: string;
  score: number;
  qualityTier: string;
  qualityConfigured: boolean;
  calls: number;
  measured: boolean;
  latencyP50Ms: number | null;
  errorRate: number | null;
  qualityScore: number;
  latencyScore: number;
  errorScore: number;
  why: string;
}
interface Category {
  category: string;
  description: string;
  note: string | null;
  recommendations: Rec[];
}

async function recommend(category?: string): Promise<Category[]> {
  const result = await run<{ inferenceRecommendations: Category[] }>(subgraph, textKey, QUERY, { category });
  expect(result.errors).toBeUndefined();
  return result.data!.inferenceRecommendations;
}

const ranking = (category: Category) => category.recommendations.map((r) => [r.provider, r.model, r.score]);

describe('inferenceRecommendations', () => {
  it('ranks chat models by tier, then latency against the median, less the server error rate', async () => {
    const [chat] = await recommend('chat');
    // Median p50 of the measured candidates: 500 ms (a 1000, b 250, c 500).
    expect(ranking(chat!)).toEqual([
      ['provider_a', 'eye-model', 2], // high +2, no calls: neutral
      ['provider_a', 'text-model', 1], // high +2, twice as slow as the median -1
      ['provider_b', 'text-model', -1], // basic -2, twice as fast +1
      ['provider_c', 'text-model', -2], // none 0, at the median 0, 50% server errors -2
    ]);
    const c = chat!.recommendations[3]!;
    expect(c).toMatchObject({ qualityTier: 'standard', qualityConfigured: false, calls: 10, measured: true, latencyP50Ms: 500, errorRate: 0.5, errorScore: 2 });
    expect(c.why).toContain('p50 latency 500 ms');
    expect(c.why).toContain('server error rate 50% (5 of 10 calls)');
    const eye = chat!.recommendations[0]!;
    expect(eye).toMatchObject({ rank: 1, measured: false, calls: 0, latencyP50Ms: null, errorRate: null });
    expect(eye.why).toContain('latency and error rate count as neutral');
    expect(chat!.note).toContain('1 of 4 candidates');
  });

  it('weighs latency most for fast-text and uses the per-category tier for coding', async () => {
    const [fast] = await recommend('fast-text');
    expect(ranking(fast!)).toEqual([
      ['provider_b', 'text-model', 1.5],
      ['provider_a', 'eye-model', 0.5],
      ['provider_a', 'text-model', -1.5],
      ['provider_c', 'text-model', -2],
    ]);
    const [coding] = await recommend('coding');
    expect(coding!.recommendations[0]).toMatchObject({ provider: 'provider_b', model: 'text-model', score: 3, qualityTier: 'high', qualityConfigured: true });
    expect(coding!.recommendations[0]!.why).toContain('configured for coding');
  });

  it('offers vision models for vision, and the OCR engine as well for ocr', async () => {
    const [vision] = await recommend('vision');
    expect(ranking(vision!)).toEqual([['provider_a', 'eye-model', 2]]);
    const [ocr] = await recommend('ocr');
    expect(ranking(ocr!)).toEqual([
      ['provider_a', 'eye-model', 2],
      ['provider_d', 'ocr-eng', 0],
    ]);
    // Four calls are fewer than five: neutral, though each took 1 ms.
    expect(ocr!.recommendations[1]).toMatchObject({ calls: 4, measured: false, latencyScore: 0 });
  });

  it('recommends nothing for image and upscale without an image upstream, never a text model, and says why', async () => {
    for (const name of ['image', 'upscale']) {
      const [category] = await recommend(name);
      expect(category!.recommendations).toEqual([]);
      expect(category!.note).toMatch(/sd-webui/);
    }
  });

  it('answers every category without one, in the documented order', async () => {
    expect((await recommend()).map((c) => c.category)).toEqual(['chat', 'coding', 'vision', 'ocr', 'image', 'upscale', 'fast-text']);
  });

  it('refuses an unknown category, naming it', async () => {
    const result = await run(subgraph, textKey, QUERY, { category: 'poetry' });
    expect(result.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'category' });
  });
});
