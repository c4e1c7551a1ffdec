import { createOpenAI } from '@ai-sdk/openai';
import { OpenAIEmbeddings } from '@langchain/openai';
import { embed, embedMany } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackEmbedding } from '../../support/loopback-openai-server.js';
import { baseUrlOf, keyOf, ROUTES, startClientPlatform, type ClientPlatform } from './client-platform.js';

/**
 * Embeddings through client libraries no one here wrote, unmodified, on the four mounts over the
 * embedded llama.cpp and a loopback vLLM: the Vercel AI SDK's embed/embedMany on
 * createOpenAI().embedding(model), and LangChain's OpenAIEmbeddings. The vLLM vectors are the
 * loopback's own; the embedded ones are those the official openai client gets (which
 * embeddings-embedded.test.ts checks against node-llama-cpp), to float32 precision.
 */
let running: ClientPlatform;
const TEXTS = ['first text to embed', 'second text'];

beforeAll(async () => {
  running = await startClientPlatform();
}, 120_000);

afterAll(async () => {
  await running?.close();
});

async function reference(model: string, embedded: boolean, texts: string[]): Promise<number[][]> {
  if (!embedded) return texts.map((text) => loopbackEmbedding(text));
  const client = new OpenAI({ baseURL: baseUrlOf(running, '/inference/gateway'), apiKey: 'unused', maxRetries: 0 });
  return (await client.embeddings.create({ model, input: texts, encoding_format: 'float' })).data.map((d) => d.embedding);
}

function expectClose(actual: number[][], expected: number[][]): void {
  expect(actual.map((v) => v.length)).toEqual(expected.map((v) => v.length));
  actual.forEach((vector, i) => vector.forEach((value, j) => expect(value).toBeCloseTo(expected[i]![j]!, 5)));
}

describe.each(ROUTES)('$name over $engine', ({ mount, keyed, model, embedded }) => {
  it("the Vercel AI SDK's embed and embedMany", async () => {
    const embeddingModel = createOpenAI({ baseURL: baseUrlOf(running, mount), apiKey: keyOf(running, keyed) }).embedding(model);
    const expected = await reference(model, embedded, TEXTS);
    const many = await embedMany({ model: embeddingModel, values: TEXTS, maxRetries: 0 });
    expectClose(many.embeddings, expected);
    expect(many.usage.tokens).toBeGreaterThan(0);
    const one = await embed({ model: embeddingModel, value: TEXTS[0]!, maxRetries: 0 });
    expectClose([one.embedding], [expected[0]!]);
  });

  it("LangChain's OpenAIEmbeddings", async () => {
    const embeddings = new OpenAIEmbeddings({ model, apiKey: keyOf(running, keyed), maxRetries: 0, configuration: { baseURL: baseUrlOf(running, mount) } });
    const expected = await reference(model, embedded, TEXTS);
    expectClose(await embeddings.embedDocuments(TEXTS), expected);
    expectClose([await embeddings.embedQuery(TEXTS[1]!)], [expected[1]!]);
  });
});
