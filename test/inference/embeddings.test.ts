import OpenAI from 'openai';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LoopbackOpenAiServer, loopbackEmbedding } from '../support/loopback-openai-server.js';
import type { TestPlatform } from '../support/platform-harness.js';
import { everyMount, loopbackEngines, startUpstreamPlatform, waitFor } from './inference-test-kit.js';

/**
 * POST /v1/embeddings on the four mounts over a loopback vLLM (provider_a) with the official
 * openai client: the vectors are the loopback's own (loopbackEmbedding), floats or base64 as the
 * client decodes them, usage as the upstream counted it and recorded. A llama.cpp upstream
 * (provider_b, gateway only) does not embed here: 400 capability_not_served.
 */
let platform: TestPlatform;
let vllm: LoopbackOpenAiServer;
let llama: LoopbackOpenAiServer;
let textKey: string;
let db: pg.Client;

const MODEL = 'vllm-embed';
const LLAMA_MODEL = 'llama-model';

beforeAll(async () => {
  [vllm, llama] = await Promise.all([
    LoopbackOpenAiServer.start('vllm', [{ id: MODEL, contextLength: 4096 }]),
    LoopbackOpenAiServer.start('llama.cpp', [{ id: LLAMA_MODEL, contextLength: 4096 }]),
  ]);
  ({ platform, textKey } = await startUpstreamPlatform({
    providers: [
      { id: 'provider_a', name: 'A', engines: loopbackEngines(vllm.url, 'vllm') },
      { id: 'provider_b', name: 'B', engines: loopbackEngines(llama.url, 'llama.cpp') },
    ],
    interfaces: everyMount(['provider_a'], ['provider_a', 'provider_b']),
  }));
  db = new pg.Client({ connectionString: platform.databaseUrl });
  await db.connect();
}, 60_000);

afterAll(async () => {
  await db?.end();
  await platform?.close();
  await Promise.all([vllm?.close(), llama?.close()]);
});

afterEach(() => {
  vllm.reset();
  llama.reset();
});

const MOUNTS = [
  { name: 'Service T', mount: '/inference/text', key: () => textKey },
  { name: 'Service I', mount: '/inference/image', key: () => textKey },
  { name: 'the proxy', mount: '/inference/proxy', key: () => 'ignored' },
  { name: 'the gateway', mount: '/inference/gateway', key: () => 'ignored' },
];

const client = (mount: string, key: string) => new OpenAI({ baseURL: `${platform.baseUrl}${mount}/v1`, apiKey: key, maxRetries: 0 });

/** float32 rounding, as base64 carries the vector. */
const asFloat32 = (vector: number[]) => Array.from(new Float32Array(vector));

describe.each(MOUNTS)('POST /v1/embeddings on $name', ({ mount, key }) => {
  it('embeds several texts as floats with the upstream vectors and usage', async () => {
    const input = ['the first text', 'a second one'];
    const answer = await client(mount, key()).embeddings.create({ model: MODEL, input, encoding_format: 'float' });
    expect(answer.object).toBe('list');
    expect(answer.model).toBe(MODEL);
    expect(answer.data.map((d) => ({ object: d.object, index: d.index }))).toEqual([
      { object: 'embedding', index: 0 },
      { object: 'embedding', index: 1 },
    ]);
    answer.data.forEach((d, i) => expect(d.embedding).toEqual(loopbackEmbedding(input[i]!)));
    const sent = vllm.requests.find((r) => r.path === '/v1/embeddings');
    expect(sent?.body).toMatchObject({ model: MODEL, input });
    // The loopback counts a BOS and each word: 4 + 4.
    expect(answer.usage).toEqual({ prompt_tokens: 8, total_tokens: 8 });
  });

  it("embeds as base64 by the client's default, decoded by the client to the same vector", async () => {
    const answer = await client(mount, key()).embeddings.create({ model: MODEL, input: 'decode me' });
    expect(answer.data[0]!.embedding).toEqual(asFloat32(loopbackEmbedding('decode me')));
  });

  it('embeds token arrays, one vector each', async () => {
    const input = [
      [1, 2, 3],
      [4, 5],
    ];
    const answer = await client(mount, key()).embeddings.create({ model: MODEL, input, encoding_format: 'float' });
    expect(answer.data.map((d) => d.embedding)).toEqual(input.map((tokens) => loopbackEmbedding(tokens)));
    expect(answer.usage.prompt_tokens).toBe(5);
  });

  it('refuses an empty input and an unknown parameter before the upstream is asked', async () => {
    const embeddings = client(mount, key()).embeddings;
    await expect(embeddings.create({ model: MODEL, input: '' })).rejects.toBeInstanceOf(OpenAI.APIError);
    await expect(embeddings.create({ model: MODEL, input: [] })).rejects.toMatchObject({ status: expect.any(Number) });
    const unknown = await embeddings.create({ model: MODEL, input: 'x', colour: 'red' } as never).catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(OpenAI.BadRequestError);
    expect((unknown as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('colour');
    for (const error of [await embeddings.create({ model: MODEL, input: '' }).catch((e: unknown) => e)]) {
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBeLessThan(500);
    }
    const tooMany = await embeddings.create({ model: MODEL, input: Array.from({ length: 2049 }, () => 'x') }).catch((e: unknown) => e);
    expect((tooMany as InstanceType<typeof OpenAI.APIError>).status).toBeGreaterThanOrEqual(400);
    expect((tooMany as InstanceType<typeof OpenAI.APIError>).status).toBeLessThan(500);
    expect(vllm.requests.some((r) => r.path === '/v1/embeddings')).toBe(false);
  });

  it('passes dimensions and null-as-absent fields to the vLLM upstream as it decides', async () => {
    await client(mount, key()).embeddings.create({ model: MODEL, input: 'x', dimensions: 4, user: null } as never);
    const sent = vllm.requests.find((r) => r.path === '/v1/embeddings');
    expect(sent?.body).toEqual({ model: MODEL, input: ['x'], encoding_format: 'float', dimensions: 4 });
  });
});

describe('a client that goes away', () => {
  it('closes the upstream embeddings request early', async () => {
    vllm.behaviour = { ...LoopbackOpenAiServer.defaults(), headerDelayMs: 60_000 };
    const aborter = new AbortController();
    const pending = client('/inference/gateway', 'ignored')
      .embeddings.create({ model: MODEL, input: 'slow' }, { signal: aborter.signal })
      .catch((e: unknown) => e);
    await waitFor('the upstream request', async () => vllm.requests.some((r) => r.path === '/v1/embeddings'));
    const closed = vllm.nextEarlyClose();
    aborter.abort();
    await pending;
    await closed;
    vllm.behaviour = LoopbackOpenAiServer.defaults();
  });
});

describe('models that do not embed and usage', () => {
  it('lists which models embed', async () => {
    const models = (await client('/inference/gateway', 'ignored').models.list()).data as unknown as { id: string; embeddings?: boolean }[];
    expect(models.find((m) => m.id === MODEL)?.embeddings).toBe(true);
    expect(models.find((m) => m.id === LLAMA_MODEL)?.embeddings).toBe(false);
  });

  it('refuses a model whose engine cannot embed with 400 capability_not_served', async () => {
    const error = await client('/inference/gateway', 'ignored')
      .embeddings.create({ model: LLAMA_MODEL, input: 'x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('capability_not_served');
    expect(llama.requests.some((r) => r.path === '/v1/embeddings')).toBe(false);
    await waitFor('the refused record', async () => (await db.query(`select 1 from inference.usage_record where model = $1 and status = 400 and error_code = 'capability_not_served'`, [LLAMA_MODEL])).rowCount! > 0);
  });

  it('records an embeddings call with its prompt tokens', async () => {
    const answer = await client('/inference/text', textKey).embeddings.create({ model: MODEL, input: 'count these three words please', encoding_format: 'float' });
    const row = await waitFor('the embeddings record', async () => (await db.query(`select * from inference.usage_record where interface = 'service_t' and prompt_tokens = $1 and status = 200`, [answer.usage.prompt_tokens])).rows[0]);
    expect(row).toMatchObject({ provider: 'provider_a', model: MODEL, completion_tokens: 0, streamed: false });
  });
});
