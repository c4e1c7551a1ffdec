import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import OpenAI from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { inferenceConfigFrom } from '../../subgraphs/inference/config/load-inference-config.js';
import { writeRandomGguf } from '../../subgraphs/inference/engines/llama/gguf-writer.js';
import { llamaInferenceConfig, modelsReady } from '../support/inference-config.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

/**
 * Shared pieces of the inference tests that hold generations open, count slots and read the
 * gateway's status: one platform per file over the embedded llama.cpp, clients per mount (from
 * another loopback address when a test needs a second client address), streams held open after
 * their first chunk, and a poll on a condition with a deadline.
 */

export interface InferencePlatform {
  platform: TestPlatform;
  close(): Promise<void>;
}

/**
 * A platform whose four providers serve the random-weight `tiny` model with `sequences` parallel
 * sequences; `contextLength` rewrites tiny's trained context (2048) so that a contextSize above it
 * takes effect.
 */
export async function startInferencePlatform(
  overrides: Record<string, unknown> = {},
  llama: { sequences?: number; contextSize?: number; contextLength?: number } = {},
): Promise<InferencePlatform> {
  const { contextLength, ...engine } = llama;
  const built = await llamaInferenceConfig(overrides, engine);
  if (contextLength) await writeRandomGguf(join(built.modelsDir, 'tiny.gguf'), { seed: 7, contextLength });
  let platform: TestPlatform | undefined;
  try {
    platform = await startTestPlatform({ inference: built.config });
    await modelsReady(platform.baseUrl);
  } catch (error) {
    await platform?.close();
    await rm(built.modelsDir, { recursive: true, force: true });
    throw error;
  }
  const started = platform;
  return {
    platform: started,
    close: async () => {
      await started.close();
      await rm(built.modelsDir, { recursive: true, force: true });
    },
  };
}

/** A provider's engines: one upstream at a loopback stand-in's URL, in its wire format. */
export function loopbackEngines(url: string, flavour: 'vllm' | 'llama.cpp', extra: Record<string, unknown> = {}): Record<string, unknown>[] {
  return [{ type: 'openai-upstream', url, flavour, timeouts: { connectMs: 2_000 }, ...extra }];
}

/** The four mounts over `providers`, the gateway over `gateway` (its first the default). */
export function everyMount(providers: string[], gateway: string[] = providers): Record<string, unknown> {
  return { serviceT: { providers }, serviceI: { providers }, proxy: { providers }, gateway: { providers: gateway, defaultProvider: gateway[0] } };
}

/** A platform over upstream providers (loopback stand-ins), with a text key of account acme. */
export async function startUpstreamPlatform(inference: { providers: unknown[]; interfaces: unknown; responses?: unknown }): Promise<{ platform: TestPlatform; textKey: string }> {
  const platform = await startTestPlatform({ inference: inferenceConfigFrom(inference, null) });
  try {
    return { platform, textKey: await platform.issueKey('acme', 'text') };
  } catch (error) {
    await platform.close();
    throw error;
  }
}

const agents = new Map<string, Agent>();

/**
 * The openai client on a mount, without retries. `localAddress` connects from another loopback
 * address (127.0.0.2, ...), which the edge sees as another client address.
 */
export function openaiClient(baseUrl: string, mount: string, apiKey = 'unused', localAddress?: string): OpenAI {
  if (!localAddress) return new OpenAI({ baseURL: `${baseUrl}${mount}/v1`, apiKey, maxRetries: 0 });
  let agent = agents.get(localAddress);
  if (!agent) agents.set(localAddress, (agent = new Agent({ localAddress })));
  return new OpenAI({
    baseURL: `${baseUrl}${mount}/v1`,
    apiKey,
    maxRetries: 0,
    fetch: undiciFetch as unknown as typeof fetch,
    fetchOptions: { dispatcher: agent } as never,
  });
}

/** Closes the agents openaiClient made for other loopback addresses. */
export async function closeClientAgents(): Promise<void> {
  await Promise.all([...agents.values()].map((agent) => agent.close()));
  agents.clear();
}

/**
 * A generation that cannot end early: the grammar allows the end-of-text token only after 20000
 * letters, so the random-weight model writes until max_tokens, some 14 s on one sequence of the
 * test machine (tiny needs contextLength and contextSize 8192 for it); the tests abort it long
 * before. Not on Service T, which takes no guided_* parameters.
 */
export const LONG_GENERATION = { model: 'tiny', messages: [{ role: 'user' as const, content: 'write on' }], max_tokens: 6000, guided_regex: '([a-z]{1000}){20}' };

/** A request under way whose client can go away. */
export interface Pending {
  abort(): void;
  /** The answer, or the error it ended with (an APIUserAbortError after abort()). */
  settled: Promise<unknown>;
}

/** A stream whose first chunk has arrived: the request is certainly in flight behind the edge. */
export interface HeldStream extends Pending {
  first: OpenAI.ChatCompletionChunk;
  /** Reads the next chunk (to see that the stream still runs). */
  next(): Promise<IteratorResult<OpenAI.ChatCompletionChunk>>;
}

/** Starts a streamed chat completion with `body` (plus stream: true) and waits for its first chunk. */
export async function holdStream(client: OpenAI, body: Record<string, unknown> = LONG_GENERATION): Promise<HeldStream> {
  const stream = (await client.chat.completions.create({ ...body, stream: true } as unknown as OpenAI.ChatCompletionCreateParamsStreaming)) as unknown as AsyncIterable<OpenAI.ChatCompletionChunk> & {
    controller: AbortController;
  };
  const iterator = stream[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done) throw new Error('The stream ended before its first chunk');
  let resolveSettled!: (value: unknown) => void;
  const settled = new Promise<unknown>((resolve) => (resolveSettled = resolve));
  return {
    first: first.value,
    next: () => iterator.next(),
    abort: () => {
      stream.controller.abort();
      resolveSettled(undefined);
    },
    settled,
  };
}

/**
 * Sends a chat completion without waiting for anything: for requests that wait behind a running
 * generation (their headers come with their first token), seen in flight through /v1/status.
 */
export function sendChat(client: OpenAI, body: Record<string, unknown> = LONG_GENERATION, stream = true): Pending {
  const controller = new AbortController();
  const settled = client.chat.completions
    .create({ ...body, stream } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming, { signal: controller.signal })
    .then(
      (answer) => answer,
      (error: unknown) => error,
    );
  return { abort: () => controller.abort(), settled };
}

export interface ProviderStatusEntry {
  id: string;
  name: string;
  status: string;
  in_flight: number;
  max_concurrency: number | null;
  models: number;
  cooling_down_until: string | null;
  engines: { type: string; available: boolean; ok: boolean; detail?: string }[];
}

/** GET /inference/gateway/v1/status, by provider id. */
export async function providerStatus(baseUrl: string): Promise<Record<string, ProviderStatusEntry>> {
  const response = await fetch(`${baseUrl}/inference/gateway/v1/status`);
  if (!response.ok) throw new Error(`status answered ${response.status}`);
  const body = (await response.json()) as { data: ProviderStatusEntry[] };
  return Object.fromEntries(body.data.map((entry) => [entry.id, entry]));
}

/** Requests in flight per provider. */
export async function inFlight(baseUrl: string): Promise<Record<string, number>> {
  return Object.fromEntries(Object.values(await providerStatus(baseUrl)).map((entry) => [entry.id, entry.in_flight]));
}

/**
 * Polls `probe` until it returns something other than undefined or false, or fails after
 * `timeoutMs`: for effects that land asynchronously (a generation stopping, a
 * batched usage record).
 */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until no provider has a request in flight (every generation has stopped). */
export async function allIdle(baseUrl: string, timeoutMs?: number): Promise<void> {
  let counts: Record<string, number> = {};
  await waitFor(
    'every provider idle',
    async () => {
      counts = await inFlight(baseUrl);
      return Object.values(counts).every((n) => n === 0);
    },
    timeoutMs,
  ).catch((error: Error) => {
    throw new Error(`${error.message}; in flight: ${JSON.stringify(counts)}`);
  });
}

/** Waits until the provider has exactly `count` requests in flight. */
export async function inFlightReaches(baseUrl: string, provider: string, count: number, timeoutMs?: number): Promise<void> {
  let seen: number | undefined;
  await waitFor(
    `${count} requests in flight on ${provider}`,
    async () => {
      seen = (await inFlight(baseUrl))[provider];
      return seen === count;
    },
    timeoutMs,
  ).catch((error: Error) => {
    throw new Error(`${error.message}; last seen ${seen}`);
  });
}
