import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inferenceConfigFrom } from '../../subgraphs/inference/config/load-inference-config.js';
import { LoopbackOpenAiServer } from '../support/loopback-openai-server.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';
import { startInferencePlatform, type InferencePlatform } from './inference-test-kit.js';
import { lastGeneration } from './upstream-behaviour.js';

/**
 * vLLM's own parameters with the official openai client (sent as extra body fields): on Service I,
 * the proxy and the gateway they reach a vLLM upstream verbatim; Service T's table is OpenAI's and
 * refuses them; the embedded llama.cpp refuses them naming itself.
 */
const VLLM_OWN = {
  structured_outputs: { regex: '[a-z]+' },
  min_tokens: 3,
  ignore_eos: true,
  chat_template_kwargs: { enable_thinking: false },
  guided_grammar: 'root ::= "yes" | "no"',
};

const MOUNTS = [
  { name: 'Service I', mount: '/inference/image', keyed: true, badValue: 400 },
  { name: 'the proxy', mount: '/inference/proxy', keyed: false, badValue: 400 },
  { name: 'the gateway', mount: '/inference/gateway', keyed: false, badValue: 422 },
];

function client(baseUrl: string, mount: string, apiKey: string): OpenAI {
  return new OpenAI({ baseURL: `${baseUrl}${mount}/v1`, apiKey, maxRetries: 0 });
}

async function refusal(pending: Promise<unknown>): Promise<APIError> {
  const error = await pending.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(APIError);
  return error as APIError;
}

describe('over a vLLM upstream', () => {
  let platform: TestPlatform;
  let vllm: LoopbackOpenAiServer;
  let textKey: string;
  const MODEL = 'vllm-model';

  beforeAll(async () => {
    vllm = await LoopbackOpenAiServer.start('vllm', [{ id: MODEL, contextLength: 4096 }]);
    const a = ['provider_a'];
    const config = inferenceConfigFrom(
      {
        providers: [{ id: 'provider_a', name: 'A', engines: [{ type: 'openai-upstream', url: vllm.url, flavour: 'vllm', timeouts: { connectMs: 2_000 } }] }],
        interfaces: { serviceT: { providers: a }, serviceI: { providers: a }, proxy: { providers: a }, gateway: { providers: a, defaultProvider: 'provider_a' } },
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

  describe.each(MOUNTS)('$name', ({ mount, keyed, badValue }) => {
    const openai = () => client(platform.baseUrl, mount, keyed ? textKey : 'ignored');

    it('sends structured_outputs, min_tokens, ignore_eos, chat_template_kwargs and guided_grammar of a chat to vLLM verbatim', async () => {
      const answer = await openai().chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], ...VLLM_OWN } as OpenAI.ChatCompletionCreateParamsNonStreaming);
      expect(answer.choices[0]!.message.content).toBe('Hello, loopback world.');
      expect(lastGeneration(vllm).body).toMatchObject(VLLM_OWN);
    });

    it('sends them with a streamed completion too', async () => {
      const { chat_template_kwargs: _chatOnly, ...own } = VLLM_OWN;
      const stream = await openai().completions.create({ model: MODEL, prompt: 'Once', stream: true, ...own } as OpenAI.CompletionCreateParamsStreaming);
      let text = '';
      for await (const piece of stream) text += piece.choices[0]?.text ?? '';
      expect(text).toBe('Hello, loopback world.');
      expect(lastGeneration(vllm).body).toMatchObject(own);
    });

    it('refuses structured_outputs with guided_json, which vLLM would receive as one field', async () => {
      const body = { model: MODEL, messages: [{ role: 'user', content: 'Hi' }], structured_outputs: { regex: 'a' }, guided_json: { type: 'object' } };
      const error = await refusal(openai().chat.completions.create(body as never));
      expect(error.status).toBe(badValue);
      expect(error.param).toBe('structured_outputs');
    });

    it('refuses a parameter of the wrong shape with the bad-value status, naming it', async () => {
      const error = await refusal(openai().chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], min_tokens: 'three' } as never));
      expect(error.status).toBe(badValue);
      expect(error.param).toBe('min_tokens');
    });
  });

  it('Service T, whose table is OpenAI’s, refuses them as unknown', async () => {
    const error = await refusal(client(platform.baseUrl, '/inference/text', textKey).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], min_tokens: 3 } as never));
    expect(error.status).toBe(400);
    expect(error.message).toContain('min_tokens');
  });
});

describe('over the embedded llama.cpp', () => {
  let running: InferencePlatform;
  let textKey: string;

  beforeAll(async () => {
    running = await startInferencePlatform({}, { contextSize: 2048 });
    textKey = await running.platform.issueKey('acme', 'text');
  }, 120_000);

  afterAll(async () => {
    await running?.close();
  });

  describe.each(MOUNTS)('$name', ({ mount, keyed, badValue }) => {
    it.each(Object.keys(VLLM_OWN))('refuses %s naming the llama engine', async (param) => {
      const openai = client(running.platform.baseUrl, mount, keyed ? textKey : 'ignored');
      const body = { model: 'tiny', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2, [param]: VLLM_OWN[param as keyof typeof VLLM_OWN] };
      const error = await refusal(openai.chat.completions.create(body as never));
      expect(error.status).toBe(badValue);
      expect(error.param).toBe(param);
      expect(error.message).toContain(`${param} is not supported by the llama engine`);
    });
  });
});
