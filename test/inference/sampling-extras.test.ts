import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoopbackOpenAiServer } from '../support/loopback-openai-server.js';
import type { TestPlatform } from '../support/platform-harness.js';
import { everyMount, loopbackEngines, startInferencePlatform, startUpstreamPlatform, type InferencePlatform } from './inference-test-kit.js';
import { lastGeneration } from './upstream-behaviour.js';

/**
 * vLLM's own parameters with the official openai client (sent as extra body fields): on Service I,
 * the proxy and the gateway they reach a vLLM upstream verbatim; Service T's table is OpenAI's and
 * refuses them; the embedded llama.cpp refuses them naming itself (and answers logprobs).
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

const ALL_MOUNTS = [{ name: 'Service T', mount: '/inference/text', keyed: true, badValue: 422 }, ...MOUNTS];

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
    ({ platform, textKey } = await startUpstreamPlatform({
      providers: [{ id: 'provider_a', name: 'A', engines: loopbackEngines(vllm.url, 'vllm') }],
      interfaces: everyMount(['provider_a']),
    }));
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

  describe.each(ALL_MOUNTS)('logprobs on $name', ({ mount, keyed, badValue }) => {
    const openai = () => client(platform.baseUrl, mount, keyed ? textKey : 'ignored');
    const messages = [{ role: 'user' as const, content: 'Hi' }];

    it('asks vLLM for logprobs and top_logprobs and answers them in OpenAI’s chat shape', async () => {
      const answer = await openai().chat.completions.create({ model: MODEL, messages, logprobs: true, top_logprobs: 2 });
      expect(lastGeneration(vllm).body).toMatchObject({ logprobs: true, top_logprobs: 2 });
      const content = answer.choices[0]!.logprobs!.content!;
      expect(content.map((t) => t.token).join('')).toBe(answer.choices[0]!.message.content);
      for (const token of content) {
        expect(token.logprob).toBe(-0.5);
        expect(token.bytes).toEqual([...Buffer.from(token.token, 'utf8')]);
        expect(token.top_logprobs.map((alt) => alt.logprob)).toEqual([-1, -2]);
      }
      expect(answer.choices[0]!.logprobs!.refusal).toBeNull();
    });

    it('streams each chunk with the logprobs of its tokens', async () => {
      const stream = await openai().chat.completions.create({ model: MODEL, messages, logprobs: true, stream: true });
      let text = '';
      let tokens = '';
      for await (const piece of stream) {
        const choice = piece.choices[0];
        if (!choice?.delta.content) continue;
        text += choice.delta.content;
        tokens += choice.logprobs!.content!.map((t) => t.token).join('');
        expect(choice.logprobs!.content!.every((t) => t.top_logprobs.length === 0)).toBe(true);
      }
      expect(tokens).toBe(text);
      expect(text).toBe('Hello, loopback world.');
    });

    it('answers completions’ logprobs as tokens, token_logprobs, top_logprobs and text_offset', async () => {
      const answer = await openai().completions.create({ model: MODEL, prompt: 'Once', logprobs: 1 });
      expect(lastGeneration(vllm).body).toMatchObject({ logprobs: 1 });
      const logprobs = answer.choices[0]!.logprobs!;
      expect(logprobs.tokens!.join('')).toBe(answer.choices[0]!.text);
      expect(logprobs.token_logprobs!.every((lp) => lp === -0.5)).toBe(true);
      expect(logprobs.top_logprobs!.every((top) => Object.keys(top).length === 1)).toBe(true);
      const offsets = logprobs.tokens!.map((_, i) => logprobs.tokens!.slice(0, i).join('').length);
      expect(logprobs.text_offset).toEqual(offsets);
    });

    it('refuses top_logprobs without logprobs, and top_logprobs above 20, naming top_logprobs', async () => {
      for (const body of [{ top_logprobs: 2 }, { logprobs: true, top_logprobs: 21 }]) {
        const error = await refusal(openai().chat.completions.create({ model: MODEL, messages, ...body }));
        expect([badValue, 400]).toContain(error.status);
        expect(error.message).toContain('top_logprobs');
      }
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

  describe.each(ALL_MOUNTS)('logprobs on $name', ({ mount, keyed }) => {
    it('answers logprobs from the llama engine, chat and completions', async () => {
      const openai = client(running.platform.baseUrl, mount, keyed ? textKey : 'ignored');
      const chat = await openai.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2, logprobs: true, seed: 1 });
      expect(chat.choices[0]!.logprobs!.content!.length).toBeGreaterThan(0);
      const completion = await openai.completions.create({ model: 'tiny', prompt: 'Once', max_tokens: 2, logprobs: 0, seed: 1 });
      expect(completion.choices[0]!.logprobs!.tokens!.length).toBeGreaterThan(0);
    });
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
