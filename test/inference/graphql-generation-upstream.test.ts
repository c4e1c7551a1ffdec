import { createClient, type Client } from 'graphql-ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { inferenceConfigFrom } from '../../subgraphs/inference/config/load-inference-config.js';
import { LoopbackOpenAiServer } from '../support/loopback-openai-server.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';
import { until } from '../support/subscription-probe.js';
import { onGenerationOnly } from './upstream-behaviour.js';

/**
 * GraphQL inference over an OpenAI-compatible upstream whose behaviour the test sets: a provider
 * at its concurrency limit, an upstream that fails before or during an answer, and a subscriber
 * that leaves midway, which must reach the upstream as a closed connection.
 */
let platform: TestPlatform;
let vllm: LoopbackOpenAiServer;
let textKey: string;
const clients: Client[] = [];

const MODEL = 'vllm-model';
// Words an upstream might say that must never reach a client.
const LEAKY = 'weights at /srv/models/secret.gguf on 10.9.8.7';

beforeAll(async () => {
  vllm = await LoopbackOpenAiServer.start('vllm', [{ id: MODEL, contextLength: 4096 }]);
  const config = inferenceConfigFrom(
    {
      providers: [{ id: 'provider_a', name: 'A', maxConcurrency: 1, engines: [{ type: 'openai-upstream', url: vllm.url, flavour: 'vllm', timeouts: { connectMs: 2_000 } }] }],
      interfaces: {
        serviceT: { providers: ['provider_a'] },
        serviceI: { providers: ['provider_a'] },
        proxy: { providers: ['provider_a'] },
        gateway: { providers: ['provider_a'], defaultProvider: 'provider_a' },
      },
    },
    null,
  );
  platform = await startTestPlatform({ inference: config });
  textKey = await platform.issueKey('acme', 'text');
}, 60_000);

afterAll(async () => {
  for (const client of clients) await client.dispose();
  await platform?.close();
  await vllm?.close();
});

afterEach(() => {
  vllm.reset();
});

interface Answer<T = Record<string, unknown>> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string; reason?: string } }[];
}

const CHAT = 'mutation($input: ChatCompletionInput!) { chatCompletion(input: $input) { text finishReason } }';
const STREAM = 'subscription($input: ChatCompletionInput!) { chatCompletionStream(input: $input) { text finishReason usage { completionTokens } } }';
const input = (extra: Record<string, unknown> = {}) => ({ model: MODEL, messages: [{ role: 'USER', content: 'hello' }], ...extra });

async function chat(extra: Record<string, unknown> = {}): Promise<Answer<{ chatCompletion: { text: string; finishReason: string } }>> {
  const response = await platform.request('/graphql', { method: 'POST', key: textKey, json: { query: CHAT, variables: { input: input(extra) } } });
  return (await response.json()) as Answer<{ chatCompletion: { text: string; finishReason: string } }>;
}

function subscribe(extra: Record<string, unknown> = {}) {
  const client = createClient({ url: platform.graphqlUrl.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${textKey}` }, retryAttempts: 0 });
  clients.push(client);
  return client.iterate<{ chatCompletionStream: { text: string; finishReason: string | null } }>({ query: STREAM, variables: { input: input(extra) } });
}

const generationRequests = () => vllm.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/chat/completions')).length;

describe('GraphQL inference over an upstream', () => {
  it('answers the loopback text', async () => {
    const answer = await chat();
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.chatCompletion).toEqual({ text: 'Hello, loopback world.', finishReason: 'STOP' });
  });

  it('refuses a call beyond the provider maxConcurrency with RATE_LIMITED provider_busy', async () => {
    // The first call holds the provider's one slot while the upstream delays its headers.
    onGenerationOnly(vllm, { headerDelayMs: 1_500 });
    const first = chat();
    await until(() => generationRequests() === 1, 'the first call to reach the upstream');
    const second = await chat();
    expect(second.data).toBeNull();
    expect(second.errors![0]!.extensions).toMatchObject({ code: 'RATE_LIMITED', reason: 'provider_busy' });
    expect((await first).errors).toBeUndefined();
  });

  it('answers an upstream failure with SERVICE_UNAVAILABLE, unmasked but without the upstream words', async () => {
    onGenerationOnly(vllm, { fail: { status: 500, message: LEAKY } });
    const answer = await chat();
    expect(answer.errors![0]!.extensions?.code).toBe('SERVICE_UNAVAILABLE');
    expect(answer.errors![0]!.extensions?.reason).toMatch(/^(upstream_error|service_unavailable)$/);
    expect(JSON.stringify(answer)).not.toContain('10.9.8.7');
    expect(JSON.stringify(answer)).not.toContain('request ');
  });

  it('ends a stream that fails midway with the chunks so far, then one event carrying SERVICE_UNAVAILABLE', async () => {
    onGenerationOnly(vllm, { streamErrorAfter: { chunks: 2, code: 500, message: LEAKY, type: 'InternalServerError' } });
    const events: Answer<{ chatCompletionStream: { text: string } }>[] = [];
    for await (const event of subscribe()) events.push(event as Answer<{ chatCompletionStream: { text: string } }>);
    const failed = events.at(-1)!;
    expect(failed.errors![0]!.extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', reason: 'upstream_error' });
    expect(events.slice(0, -1).map((e) => e.data!.chatCompletionStream.text).join('')).toBe('Hello,');
    expect(JSON.stringify(events)).not.toContain('10.9.8.7');
  });

  it('closes the upstream request when the subscriber unsubscribes midway', async () => {
    onGenerationOnly(vllm, { reply: Array.from({ length: 200 }, (_, i) => ` w${i}`), chunkDelayMs: 50 });
    const iterator = subscribe({ maxTokens: 200 });
    const first = await iterator.next();
    expect(first.value?.data?.chatCompletionStream.text).toBe(' w0');
    const hungUp = vllm.nextEarlyClose();
    await iterator.return!();
    await hungUp;
    expect(vllm.requests.findLast((r) => r.path.endsWith('/chat/completions'))!.closedEarly).toBe(true);
  });

  it('ends the upstream at once when one of several subscriptions on a socket is completed, without waiting for its next event', async () => {
    // Thirty seconds between tokens: only the unsubscribe itself can end the upstream request in time.
    onGenerationOnly(vllm, { reply: [' first', ' never'], chunkDelayMs: 30_000 });
    const client = createClient({ url: platform.graphqlUrl.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${textKey}` }, retryAttempts: 0 });
    clients.push(client);
    // A second, quiet subscription keeps the socket open: only the stream's own completion may end it.
    const quiet = client.iterate({ query: 'subscription { providerStatusChanged { id } }' });
    void quiet.next();
    const stream = client.iterate<{ chatCompletionStream: { text: string } }>({ query: STREAM, variables: { input: input({ maxTokens: 2 }) } });
    const first = stream.next();
    await until(() => generationRequests() > 0, 'the upstream generation request');
    const hungUp = vllm.nextEarlyClose();
    void first;
    await stream.return!();
    await hungUp;
    expect(vllm.requests.findLast((r) => r.path.endsWith('/chat/completions'))!.closedEarly).toBe(true);
    await quiet.return!();
  }, 15_000);
});

