import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeRandomGguf } from '../../subgraphs/inference/engines/llama/gguf-writer.js';
import { openaiClient, startInferencePlatform, type InferencePlatform } from './inference-test-kit.js';

/**
 * POST /v1/embeddings over the embedded llama engine (the random-weight `tiny`, seed 7) on the
 * four mounts with the official openai client. The vectors are checked against node-llama-cpp's
 * own embedding of the same texts from the same file, computed here; the OCR model cannot embed.
 */
let running: InferencePlatform;
let baseUrl: string;
let key: string;
let dir: string;
const TEXTS = ['hello embeddings', 'a second text'];
let expected: number[][];

beforeAll(async () => {
  running = await startInferencePlatform({}, { contextSize: 512 });
  baseUrl = running.platform.baseUrl;
  key = await running.platform.issueKey('acme', 'text');
  dir = await mkdtemp(join(tmpdir(), 'embed-reference-'));
  const path = join(dir, 'tiny.gguf');
  await writeRandomGguf(path, { seed: 7 });
  const llama = await getLlama({ gpu: false, build: 'never', skipDownload: true, usePrebuiltBinaries: true, progressLogs: false, maxThreads: 1, logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: path });
  const context = await model.createEmbeddingContext({ contextSize: 512 });
  expected = [];
  for (const text of TEXTS) expected.push([...(await context.getEmbeddingFor(model.tokenize(text))).vector]);
  await context.dispose();
  await model.dispose();
  // tiny's embedding length (gguf-writer's default), and a vector that says something.
  expect(expected.map((v) => v.length)).toEqual([64, 64]);
  expect(expected[0]!.some((v) => v !== 0)).toBe(true);
}, 120_000);

afterAll(async () => {
  await running?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const MOUNTS = [
  { name: 'Service T', mount: '/inference/text', key: () => key },
  { name: 'Service I', mount: '/inference/image', key: () => key },
  { name: 'the proxy', mount: '/inference/proxy', key: () => 'ignored' },
  { name: 'the gateway', mount: '/inference/gateway', key: () => 'ignored' },
];

function expectClose(actual: number[], reference: number[]): void {
  expect(actual).toHaveLength(reference.length);
  actual.forEach((value, i) => expect(value).toBeCloseTo(reference[i]!, 4));
}

describe.each(MOUNTS)('embeddings of the embedded llama engine on $name', ({ mount, key: keyOf }) => {
  it("gives node-llama-cpp's vectors, as floats and as base64", async () => {
    const client = openaiClient(baseUrl, mount, keyOf());
    const floats = await client.embeddings.create({ model: 'tiny', input: TEXTS, encoding_format: 'float' });
    expect(floats.data.map((d) => d.index)).toEqual([0, 1]);
    floats.data.forEach((d, i) => expectClose(d.embedding, expected[i]!));
    expect(floats.usage.prompt_tokens).toBeGreaterThan(0);
    expect(floats.usage.total_tokens).toBe(floats.usage.prompt_tokens);
    const base64 = await client.embeddings.create({ model: 'tiny', input: TEXTS[0]! });
    expectClose(base64.data[0]!.embedding, expected[0]!);
  });
});

describe('models that cannot embed', () => {
  it('refuses the OCR model with 400 capability_not_served and dimensions on llama naming the engine', async () => {
    const client = openaiClient(baseUrl, '/inference/text', key);
    const ocr = await client.embeddings.create({ model: 'ocr-eng', input: 'x' }).catch((e: unknown) => e);
    expect(ocr).toBeInstanceOf(OpenAI.BadRequestError);
    expect((ocr as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('capability_not_served');
    const dims = await client.embeddings.create({ model: 'tiny', input: 'x', dimensions: 4 }).catch((e: unknown) => e);
    expect(dims).toBeInstanceOf(OpenAI.APIError);
    expect((dims as InstanceType<typeof OpenAI.APIError>).status).toBeLessThan(500);
    expect((dims as InstanceType<typeof OpenAI.APIError>).message).toContain('llama engine');
  });
});
