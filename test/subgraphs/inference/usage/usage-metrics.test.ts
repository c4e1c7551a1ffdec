import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inferenceConfigFrom } from '../../../../subgraphs/inference/config/load-inference-config.js';
import { LoopbackOpenAiServer } from '../../../support/loopback-openai-server.js';
import { startTestPlatform, type TestPlatform } from '../../../support/platform-harness.js';

/** Inference figures on the inference subgraph's /metrics, after calls over a loopback vLLM. */
let platform: TestPlatform;
let vllm: LoopbackOpenAiServer;
let textKey: string;
const MODEL = 'vllm-model';

beforeAll(async () => {
  vllm = await LoopbackOpenAiServer.start('vllm', [{ id: MODEL, contextLength: 4096 }]);
  const config = inferenceConfigFrom(
    {
      providers: [{ id: 'provider_a', name: 'A', engines: [{ type: 'openai-upstream', url: vllm.url, flavour: 'vllm' }] }],
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
  await platform?.close();
  await vllm?.close();
});

const CHAT = 'mutation($input: ChatCompletionInput!) { chatCompletion(input: $input) { text } }';
const chat = async (model: string) =>
  (await platform.request('/graphql', { method: 'POST', key: textKey, json: { query: CHAT, variables: { input: { model, messages: [{ role: 'USER', content: 'hello' }] } } } })).json();

function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('inference metrics', () => {
  it('counts tokens, times the first token and counts errors by provider and model; a made-up model is (unknown)', async () => {
    expect(await chat(MODEL)).toMatchObject({ data: { chatCompletion: { text: 'Hello, loopback world.' } } });
    const usage = vllm.lastUsage!;
    vllm.behaviour.fail = { status: 500, message: 'upstream down' };
    expect(((await chat(MODEL)) as { errors?: unknown[] }).errors).toBeDefined();
    vllm.reset();
    expect(((await chat('no-such-model-4821')) as { errors?: unknown[] }).errors).toBeDefined();

    // Usage is recorded when the answer is done, which may be just after the client has it.
    const scrape = async () => (await fetch(new URL('/metrics', platform.subgraphUrls.inference))).text();
    let text = await scrape();
    while (sample(text, 'platform_inference_errors_total', { model: '(unknown)' }) === undefined) text = await scrape();

    const labels = { provider: 'provider_a', model: MODEL };
    expect(sample(text, 'platform_inference_tokens_total', { ...labels, kind: 'prompt' })).toBe(usage.prompt_tokens);
    expect(sample(text, 'platform_inference_tokens_total', { ...labels, kind: 'completion' })).toBe(usage.completion_tokens);
    expect(sample(text, 'platform_inference_time_to_first_token_seconds_count', labels)).toBe(1);
    expect(sample(text, 'platform_inference_errors_total', labels)).toBe(1);
    expect(text).not.toContain('no-such-model-4821');
  });
});
