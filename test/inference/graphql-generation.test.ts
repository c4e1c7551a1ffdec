import { rm } from 'node:fs/promises';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { llamaInferenceConfig, modelsReady } from '../support/inference-config.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

/**
 * Inference through the gateway's GraphQL API, on a running platform whose embedded llama.cpp
 * serves a random-weight GGUF: the mutations over HTTP, the streams over graphql-ws, with the
 * same plan checks, parameter ranges and usage records as the REST interfaces. The default plan
 * leaves provider_d out, so that a model outside the plan can be asked for.
 */
let platform: TestPlatform;
let modelsDir: string;
let textKey: string;
let adminKey: string;
let liveKey: string;
const clients: Client[] = [];

const MODEL = 'tiny';
const HELLO = [{ role: 'USER', content: 'hello' }];

beforeAll(async () => {
  const built = await llamaInferenceConfig({
    plans: [{ id: 'standard', name: 'Standard', models: { provider_a: ['*'], provider_b: ['*'], provider_c: ['*'] } }],
  });
  modelsDir = built.modelsDir;
  platform = await startTestPlatform({ inference: built.config });
  textKey = await platform.issueKey('acme', 'text');
  adminKey = await platform.issueKey('ops', 'admin');
  liveKey = await platform.issueKey('acme', 'live');
  await modelsReady(platform.baseUrl);
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.dispose();
  await platform?.close();
  if (modelsDir) await rm(modelsDir, { recursive: true, force: true });
});

interface Answer<T = Record<string, unknown>> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string; reason?: string; param?: string } }[];
}

async function graphql<T = Record<string, unknown>>(query: string, variables: Record<string, unknown> = {}, key = textKey): Promise<Answer<T>> {
  const response = await platform.request('/graphql', { method: 'POST', key, json: { query, variables } });
  expect(response.status).toBe(200);
  return (await response.json()) as Answer<T>;
}

interface Generated {
  text: string;
  finishReason: string;
  usage: { promptTokens: number; completionTokens: number; totalTokens: number };
  model: string;
  provider: string;
}

const CHAT = `mutation($input: ChatCompletionInput!) {
  chatCompletion(input: $input) { text finishReason usage { promptTokens completionTokens totalTokens } model provider }
}`;

async function chat(input: Record<string, unknown>, key = textKey): Promise<Answer<{ chatCompletion: Generated }>> {
  return graphql<{ chatCompletion: Generated }>(CHAT, { input: { model: MODEL, messages: HELLO, ...input } }, key);
}

async function chatText(input: Record<string, unknown>): Promise<Generated> {
  const answer = await chat(input);
  expect(answer.errors).toBeUndefined();
  return answer.data!.chatCompletion;
}

function wsClient(key = textKey): Client {
  const client = createClient({ url: platform.graphqlUrl.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${key}` }, retryAttempts: 0 });
  clients.push(client);
  return client;
}

interface Chunk {
  text: string;
  finishReason: string | null;
  usage: Generated['usage'] | null;
}

const STREAM = `subscription($input: ChatCompletionInput!) {
  chatCompletionStream(input: $input) { text finishReason usage { promptTokens completionTokens totalTokens } }
}`;

/** Every event of one subscription, until it completes. */
async function streamed(input: Record<string, unknown>): Promise<Answer<{ chatCompletionStream: Chunk }>[]> {
  const events: Answer<{ chatCompletionStream: Chunk }>[] = [];
  for await (const event of wsClient().iterate({ query: STREAM, variables: { input: { model: MODEL, messages: HELLO, ...input } } })) {
    events.push(event as Answer<{ chatCompletionStream: Chunk }>);
  }
  return events;
}

interface UsageRow {
  status: number;
  errorCode: string | null;
  streamed: boolean;
  completionTokens: number;
  model: string;
}

/** The GRAPHQL usage records of the text key's account, newest first (they are written in batches, so callers poll). */
async function graphqlUsage(): Promise<UsageRow[]> {
  const answer = await graphql<{ inferenceUsage: { data: UsageRow[] } }>(
    `query($from: DateTime!, $to: DateTime!) { inferenceUsage(from: $from, to: $to, interface: GRAPHQL, limit: 100) { data { status errorCode streamed completionTokens model } } }`,
    { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() },
  );
  expect(answer.errors).toBeUndefined();
  return answer.data!.inferenceUsage.data;
}

/** Polls `read` until `ready` holds of its value; the deadline only bounds a failing test. */
async function eventually<T>(read: () => Promise<T>, ready: (value: T) => boolean, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ready(value)) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('inferenceModels', () => {
  it("lists the gateway's models with their providers, context length and whether the plan has them", async () => {
    const answer = await graphql<{ inferenceModels: { id: string; provider: string; providers: string[]; contextLength: number; inputModalities: string[]; status: string; onPlan: boolean }[] }>(
      '{ inferenceModels { id provider providers contextLength inputModalities status onPlan } }',
    );
    expect(answer.errors).toBeUndefined();
    const tiny = answer.data!.inferenceModels.find((m) => m.id === MODEL)!;
    expect(tiny).toMatchObject({ contextLength: 512, inputModalities: ['text'], status: 'READY', onPlan: true });
    expect([...tiny.providers].sort()).toEqual(['provider_a', 'provider_b', 'provider_c', 'provider_d']);
    expect(answer.data!.inferenceModels.map((m) => m.id)).toContain('ocr-eng');
  });

  it("marks one provider's models off the plan when the plan leaves the provider out", async () => {
    const answer = await graphql<{ inferenceModels: { id: string; providers: string[]; onPlan: boolean }[] }>('query($p: String) { inferenceModels(provider: $p) { id providers onPlan } }', { p: 'provider_d' });
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.inferenceModels.find((m) => m.id === MODEL)).toEqual({ id: MODEL, providers: ['provider_d'], onPlan: false });
  });

  it('refuses an unknown provider as BAD_USER_INPUT', async () => {
    const answer = await graphql('{ inferenceModels(provider: "nowhere") { id } }');
    expect(answer.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'invalid_provider', param: 'provider' });
  });
});

describe('chatCompletion, completion and tokenize', () => {
  it('completes a chat to maxTokens with finishReason LENGTH and exact usage, recorded with interface GRAPHQL', async () => {
    const done = await chatText({ maxTokens: 5, seed: 3, temperature: 0 });
    expect(done.finishReason).toBe('LENGTH');
    expect(done.usage.completionTokens).toBe(5);
    expect(done.usage.promptTokens).toBeGreaterThan(0);
    expect(done.usage.totalTokens).toBe(done.usage.promptTokens + 5);
    expect(done.model).toBe(MODEL);
    expect(['provider_a', 'provider_b', 'provider_c']).toContain(done.provider);
    const rows = await eventually(graphqlUsage, (r) => r.some((row) => row.status === 200 && !row.streamed && row.completionTokens === 5), 'the call to be recorded');
    expect(rows.find((row) => row.status === 200)).toMatchObject({ model: MODEL, errorCode: null });
  });

  it('gives the same text for the same seed', async () => {
    const input = { maxTokens: 12, seed: 1234, temperature: 1 };
    const first = await chatText(input);
    const second = await chatText(input);
    expect(second.text).toBe(first.text);
    expect(first.text.length).toBeGreaterThan(0);
  });

  it('answers exactly one of the guidedChoice choices', async () => {
    const choices = ['alpha', 'beta', 'gamma delta'];
    for (const seed of [1, 2, 3]) {
      const done = await chatText({ guidedChoice: choices, seed, temperature: 1, maxTokens: 30 });
      expect(choices).toContain(done.text);
      expect(done.finishReason).toBe('STOP');
    }
  });

  it('completes a raw prompt and counts its tokens', async () => {
    const completion = await graphql<{ completion: Generated }>('mutation($input: CompletionInput!) { completion(input: $input) { text finishReason usage { promptTokens completionTokens } } }', {
      input: { model: MODEL, prompt: 'Once upon', maxTokens: 3, temperature: 0 },
    });
    expect(completion.errors).toBeUndefined();
    expect(completion.data!.completion.usage.completionTokens).toBe(3);
    const counted = await graphql<{ tokenize: { count: number; maxModelLen: number; tokens: number[]; provider: string } }>(
      'mutation($input: TokenizeInput!) { tokenize(input: $input) { count maxModelLen tokens provider } }',
      { input: { model: MODEL, prompt: 'Once upon' } },
    );
    expect(counted.errors).toBeUndefined();
    expect(counted.data!.tokenize.count).toBe(completion.data!.completion.usage.promptTokens);
    expect(counted.data!.tokenize.tokens).toHaveLength(counted.data!.tokenize.count);
    expect(counted.data!.tokenize.maxModelLen).toBe(512);
  });

  it('answers an unknown model with NOT_FOUND model_not_found', async () => {
    const answer = await chat({ model: 'nowhere' });
    expect(answer.data).toBeNull();
    expect(answer.errors![0]!.extensions).toMatchObject({ code: 'NOT_FOUND', reason: 'model_not_found', param: 'model' });
  });

  it('refuses a model on a provider outside the plan with FORBIDDEN', async () => {
    const answer = await chat({ provider: 'provider_d', maxTokens: 2 });
    expect(answer.errors![0]!.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'model_not_on_plan' });
  });

  it('refuses parameters out of range as BAD_USER_INPUT naming the GraphQL field', async () => {
    for (const [input, param] of [
      [{ temperature: 3 }, 'temperature'],
      [{ topP: 1.5 }, 'topP'],
      [{ presencePenalty: -1 }, 'presencePenalty'],
      [{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
      [{ guidedChoice: ['a'], guidedRegex: 'a' }, 'guidedChoice'],
      [{ messages: [{ role: 'USER' }] }, 'messages[0].content'],
      [{ messages: [{ role: 'USER', parts: [{ type: 'IMAGE_URL' }] }] }, 'messages[0].parts[0].imageUrl'],
    ] as const) {
      const answer = await chat(input);
      expect(answer.errors?.[0]?.extensions, JSON.stringify(input)).toMatchObject({ code: 'BAD_USER_INPUT', param });
      if (param === 'temperature') expect(answer.errors![0]!.message).toContain("'temperature'");
    }
  });

  it('refuses an image given by URL (base64 data URIs only, as on the gateway)', async () => {
    const answer = await chat({ messages: [{ role: 'USER', parts: [{ type: 'TEXT', text: 'what is this' }, { type: 'IMAGE_URL', imageUrl: 'https://example.com/a.png' }] }], model: 'ocr-eng' });
    expect(answer.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'image_url_not_supported', param: 'messages[0].parts[1].imageUrl' });
  });

  it('serves admin keys on the default plan and refuses a live key with FORBIDDEN wrong_key_kind', async () => {
    const admin = await chat({ maxTokens: 2, temperature: 0 }, adminKey);
    expect(admin.errors).toBeUndefined();
    expect(admin.data!.chatCompletion.usage.completionTokens).toBe(2);
    expect((await chat({ provider: 'provider_d', maxTokens: 2 }, adminKey)).errors![0]!.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'model_not_on_plan' });
    const live = await chat({ maxTokens: 2 }, liveKey);
    expect(live.errors![0]!.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'wrong_key_kind' });
  });
});

describe('chatCompletionStream over graphql-ws through the gateway', () => {
  it("streams chunks whose concatenation is the mutation's text for the same seed, then one with finishReason and usage", async () => {
    const input = { maxTokens: 16, seed: 77, temperature: 1 };
    const whole = await chatText(input);
    const events = await streamed(input);
    expect(events.every((event) => event.errors === undefined)).toBe(true);
    const chunks = events.map((event) => event.data!.chatCompletionStream);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.map((c) => c.text).join('')).toBe(whole.text);
    const last = chunks.at(-1)!;
    expect(last).toEqual({ text: '', finishReason: 'LENGTH', usage: whole.usage });
    expect(chunks.slice(0, -1).every((c) => c.finishReason === null && c.usage === null && c.text.length > 0)).toBe(true);
    await eventually(graphqlUsage, (rows) => rows.some((row) => row.streamed && row.status === 200 && row.completionTokens === 16), 'the stream to be recorded');
  });

  it("streams a raw completion too, chunk by chunk, to the completion mutation's text", async () => {
    const input = { model: MODEL, prompt: 'Once upon', maxTokens: 8, seed: 9, temperature: 1 };
    const whole = await graphql<{ completion: Generated }>('mutation($input: CompletionInput!) { completion(input: $input) { text finishReason usage { promptTokens completionTokens totalTokens } } }', { input });
    expect(whole.errors).toBeUndefined();
    const chunks: Chunk[] = [];
    const query = 'subscription($input: CompletionInput!) { completionStream(input: $input) { text finishReason usage { promptTokens completionTokens totalTokens } } }';
    for await (const event of wsClient().iterate({ query, variables: { input } })) chunks.push((event as Answer<{ completionStream: Chunk }>).data!.completionStream);
    expect(chunks.map((c) => c.text).join('')).toBe(whole.data!.completion.text);
    expect(chunks.at(-1)).toEqual({ text: '', finishReason: whole.data!.completion.finishReason, usage: whole.data!.completion.usage });
  });

  it('answers a refusal as the only event, with its code', async () => {
    const events = await streamed({ model: 'nowhere' });
    expect(events).toHaveLength(1);
    expect(events[0]!.errors![0]!.extensions).toMatchObject({ code: 'NOT_FOUND', reason: 'model_not_found' });
    const [bad] = await streamed({ temperature: 3 });
    expect(bad!.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'temperature' });
  });

  // Had the generation run on to its end, its record would say 200: client_closed is written only
  // when the subscriber left first. The regex allows no end within max tokens, so the generation runs
  // all 480 (some 0.2 s here); unguided, seed 5 wrote its end token after 217 (some 0.06 s).
  it('stops the generation when the client unsubscribes: recorded as client_closed', async () => {
    const client = wsClient();
    const iterator = client.iterate({ query: STREAM, variables: { input: { model: MODEL, messages: HELLO, maxTokens: 480, guidedRegex: '([a-z]{1000}){20}', seed: 5, temperature: 1 } } });
    const first = await iterator.next();
    expect((first.value as Answer<{ chatCompletionStream: Chunk }>).data!.chatCompletionStream.text.length).toBeGreaterThan(0);
    await iterator.return!();
    const rows = await eventually(graphqlUsage, (r) => r.some((row) => row.errorCode === 'client_closed'), 'the abandoned stream to be recorded');
    expect(rows.find((row) => row.errorCode === 'client_closed')).toMatchObject({ status: 499, streamed: true });
  });
});
