import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  allIdle,
  closeClientAgents,
  holdStream,
  inFlight,
  inFlightReaches,
  LONG_GENERATION,
  openaiClient,
  sendChat,
  startInferencePlatform,
  type HeldStream,
  type InferencePlatform,
  type Pending,
} from './inference-test-kit.js';

/**
 * The parallel limits on a running platform over the embedded llama.cpp: Service I's six requests
 * per key, the proxy's six per client address, provider_b's three, and what a client that goes
 * away frees. The engine has one sequence: the first request generates (its first chunk is read,
 * so it is certainly in flight) a generation that cannot end for about a minute, the others wait
 * behind it in the engine's queue holding their slots, seen through /v1/status's in_flight. The
 * tests abort them all; each test starts from idle providers.
 */
let running: InferencePlatform;
let baseUrl: string;
let keyA: string;
let keyB: string;
let pending: Pending[] = [];

const SHORT = { model: 'tiny', messages: [{ role: 'user' as const, content: 'hi' }], max_tokens: 3 };

beforeAll(async () => {
  running = await startInferencePlatform({}, { sequences: 1, contextSize: 8192, contextLength: 8192 });
  baseUrl = running.platform.baseUrl;
  keyA = await running.platform.issueKey('acme', 'text');
  keyB = await running.platform.issueKey('globex', 'text');
}, 120_000);

afterEach(async () => {
  for (const request of pending) request.abort();
  await Promise.all(pending.map((request) => request.settled));
  pending = [];
  // A request left in flight would take a slot from the next test.
  await allIdle(baseUrl);
});

afterAll(async () => {
  await closeClientAgents();
  await running?.close();
});

function track<T extends Pending>(request: T): T {
  pending.push(request);
  return request;
}

async function refusal(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(
    () => {
      throw new Error('expected the request to be refused');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

async function expectTooManyParallel(promise: Promise<unknown>): Promise<void> {
  const error = await refusal(promise);
  expect(error).toBeInstanceOf(OpenAI.RateLimitError);
  expect(error.status).toBe(429);
  expect(error.code).toBe('too_many_parallel_requests');
  expect(error.headers?.get('retry-after')).toBe('1');
}

const shortChat = (client: OpenAI, extra: Record<string, unknown> = {}) => client.chat.completions.create({ ...SHORT, ...extra } as OpenAI.ChatCompletionCreateParamsNonStreaming);

/** `count` requests of one caller in flight on `provider`: the first generating, the rest queued behind it. */
async function fill(client: () => OpenAI, provider: string, count: number, extra: Record<string, unknown> = {}): Promise<HeldStream> {
  const first = track(await holdStream(client(), { ...LONG_GENERATION, ...extra }));
  for (let i = 1; i < count; i++) track(sendChat(client(), { ...LONG_GENERATION, ...extra }));
  await inFlightReaches(baseUrl, provider, count);
  return first;
}

describe.each([
  {
    name: 'Service I, per key',
    caller: () => openaiClient(baseUrl, '/inference/image', keyA),
    other: () => openaiClient(baseUrl, '/inference/image', keyB),
  },
  {
    name: 'the proxy, per client address',
    caller: () => openaiClient(baseUrl, '/inference/proxy', 'ignored'),
    // Another loopback address is another client address to the edge.
    other: () => openaiClient(baseUrl, '/inference/proxy', 'ignored', '127.0.0.2'),
  },
])('$name: six parallel requests', ({ caller, other }) => {
  const PROVIDER = 'provider_d';

  it('accepts six and refuses the seventh at once with 429 too_many_parallel_requests and Retry-After', async () => {
    const first = await fill(caller, PROVIDER, 6);
    await expectTooManyParallel(caller().chat.completions.create({ ...LONG_GENERATION, stream: true } as never));
    await expectTooManyParallel(shortChat(caller()));
    // Every endpoint of the interface counts, not only generations.
    await expectTooManyParallel(caller().models.list());
    // The refusals took nothing: the six are still in flight and the first still streams.
    expect((await inFlight(baseUrl))[PROVIDER]).toBe(6);
    expect((await first.next()).done).toBe(false);
  });

  it('leaves another caller unaffected while one is at its limit', async () => {
    await fill(caller, PROVIDER, 6);
    expect((await other().models.list()).data.map((m) => m.id)).toContain('tiny');
    track(sendChat(other()));
    await inFlightReaches(baseUrl, PROVIDER, 7);
    await expectTooManyParallel(shortChat(caller()));
  });

  it('gives the slot of a client that aborts back at once, running or waiting', async () => {
    const first = await fill(caller, PROVIDER, 6);
    await expectTooManyParallel(shortChat(caller()));
    first.abort();
    await inFlightReaches(baseUrl, PROVIDER, 5);
    track(sendChat(caller()));
    await inFlightReaches(baseUrl, PROVIDER, 6);
    await expectTooManyParallel(shortChat(caller()));
    // A request still waiting for the engine frees its slot the same way.
    pending.at(-2)!.abort();
    await inFlightReaches(baseUrl, PROVIDER, 5);
    track(sendChat(caller()));
    await inFlightReaches(baseUrl, PROVIDER, 6);
    await expectTooManyParallel(caller().models.list());
  });

  it('gives the slot of every completed request back', async () => {
    // More complete requests than the limit, one after another: none may keep its slot.
    for (let i = 0; i < 4; i++) {
      const stream = await caller().chat.completions.create({ ...SHORT, stream: true });
      let chunks = 0;
      for await (const part of stream) chunks += part.choices.length;
      expect(chunks).toBeGreaterThan(0);
      expect((await shortChat(caller())).object).toBe('chat.completion');
      expect((await caller().models.list()).object).toBe('list');
    }
    await allIdle(baseUrl);
    // Still six to use.
    await fill(caller, PROVIDER, 6);
    await expectTooManyParallel(shortChat(caller()));
  });
});

describe('a client that goes away', () => {
  const gateway = () => openaiClient(baseUrl, '/inference/gateway');

  it('mid-stream: the generation stops and its provider slot is released', async () => {
    const stream = track(await holdStream(gateway(), { ...LONG_GENERATION, provider: 'provider_c' }));
    for (let i = 0; i < 3; i++) expect((await stream.next()).done).toBe(false);
    expect((await inFlight(baseUrl)).provider_c).toBe(1);
    stream.abort();
    await allIdle(baseUrl);
    // The engine's one sequence is free again: a generation that had kept running would hold it for a minute.
    expect((await shortChat(gateway(), { provider: 'provider_c' })).choices[0]!.finish_reason).toBeDefined();
  });

  it('before a non-streamed answer: the generation stops too', async () => {
    const request = track(sendChat(gateway(), { ...LONG_GENERATION, provider: 'provider_c' }, false));
    await inFlightReaches(baseUrl, 'provider_c', 1);
    request.abort();
    expect(await request.settled).toBeInstanceOf(OpenAI.APIUserAbortError);
    await allIdle(baseUrl);
    expect((await shortChat(gateway(), { provider: 'provider_c' })).object).toBe('chat.completion');
  });

  it('while waiting for the engine: it leaves the queue', async () => {
    const first = track(await holdStream(gateway(), { ...LONG_GENERATION, provider: 'provider_a' }));
    const waiting = track(sendChat(gateway(), { ...LONG_GENERATION, provider: 'provider_c' }));
    await inFlightReaches(baseUrl, 'provider_c', 1);
    waiting.abort();
    await inFlightReaches(baseUrl, 'provider_c', 0);
    expect((await inFlight(baseUrl)).provider_a).toBe(1);
    expect((await first.next()).done).toBe(false);
  });
});

describe('the gateway: provider_b serves three at once', () => {
  const gateway = () => openaiClient(baseUrl, '/inference/gateway');
  const ON_B = { provider: 'provider_b' };

  it('refuses a fourth request naming provider_b at once with 429 provider_busy and Retry-After', async () => {
    await fill(gateway, 'provider_b', 3, ON_B);
    const error = await refusal(shortChat(gateway(), ON_B));
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.code).toBe('provider_busy');
    expect(error.headers?.get('retry-after')).toBe('1');
    await refusal(gateway().chat.completions.create({ ...LONG_GENERATION, ...ON_B, stream: true } as never)).then((e) => expect(e.code).toBe('provider_busy'));
    // Refused, not queued: provider_b still has its three.
    expect((await inFlight(baseUrl)).provider_b).toBe(3);
  });

  it('routes requests naming no provider to the least busy others while provider_b is full', async () => {
    await fill(gateway, 'provider_b', 3, ON_B);
    track(sendChat(gateway()));
    await inFlightReaches(baseUrl, 'provider_a', 1);
    // provider_a is busy now and provider_b full: the next goes to provider_c, the first idle one.
    track(sendChat(gateway()));
    await inFlightReaches(baseUrl, 'provider_c', 1);
    expect(await inFlight(baseUrl)).toEqual({ provider_a: 1, provider_b: 3, provider_c: 1, provider_d: 0 });
  });

  it('takes a request naming provider_b again once one of its three ends', async () => {
    const first = await fill(gateway, 'provider_b', 3, ON_B);
    first.abort();
    await inFlightReaches(baseUrl, 'provider_b', 2);
    track(sendChat(gateway(), { ...LONG_GENERATION, ...ON_B }));
    await inFlightReaches(baseUrl, 'provider_b', 3);
    expect((await refusal(shortChat(gateway(), ON_B))).code).toBe('provider_busy');
  });
});
