import OpenAI, { APIError } from 'openai';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LoopbackOpenAiServer } from '../support/loopback-openai-server.js';
import type { TestPlatform } from '../support/platform-harness.js';
import { everyMount, loopbackEngines, startInferencePlatform, startUpstreamPlatform, waitFor, type InferencePlatform } from './inference-test-kit.js';
import { lastGeneration } from './upstream-behaviour.js';

/**
 * Several choices (`n`) on chat and completions, on the four mounts: a vLLM upstream generates
 * them in one request (its `n`, its interleaved chunks read back by index); the embedded llama.cpp
 * and a llama.cpp upstream, which have no `n`, generate them one after another (choice i with
 * seed + i). Every choice has its index and finish_reason; the usage counts the prompt once and
 * sums the completions, in the answer and in the call's one usage record.
 */

const MOUNTS = [
  { name: 'Service T', mount: '/inference/text', keyed: true, badValue: 422 },
  { name: 'Service I', mount: '/inference/image', keyed: true, badValue: 400 },
  { name: 'the proxy', mount: '/inference/proxy', keyed: false, badValue: 400 },
  {
    name: 'the gateway',
    mount: '/inference/gateway',
    keyed: false,
    badValue: 422,
  },
];

async function refusal(pending: Promise<unknown>): Promise<APIError> {
  const error = await pending.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(APIError);
  return error as APIError;
}

/** A stream's chunks, read to the end. */
async function chunksOf<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const chunks: T[] = [];
  for await (const part of stream) chunks.push(part);
  return chunks;
}

/** Per choice index: the text and finish_reason of a chat stream's chunks, and the order the indexes came in. */
function readChat(chunks: OpenAI.ChatCompletionChunk[]) {
  const texts: string[] = [];
  const finishes: (string | null)[] = [];
  const order: number[] = [];
  for (const part of chunks)
    for (const choice of part.choices) {
      texts[choice.index] = (texts[choice.index] ?? '') + (choice.delta.content ?? '');
      if (choice.finish_reason) finishes[choice.index] = choice.finish_reason;
      if (choice.delta.content) order.push(choice.index);
    }
  return {
    texts,
    finishes,
    order,
    usage: chunks.find((part) => part.usage)?.usage,
  };
}

describe('over the embedded llama.cpp', () => {
  let running: InferencePlatform;
  let textKey: { id: string; secret: string };
  let db: pg.Client;
  const client = (mount: string, keyed: boolean) =>
    new OpenAI({
      baseURL: `${running.platform.baseUrl}${mount}/v1`,
      apiKey: keyed ? textKey.secret : 'unused',
      maxRetries: 0,
    });
  const HELLO = {
    model: 'tiny',
    messages: [{ role: 'user' as const, content: 'hello' }],
    max_tokens: 4,
    seed: 21,
    temperature: 1,
  };

  beforeAll(async () => {
    running = await startInferencePlatform();
    textKey = await running.platform.identity().createKey({ account: 'choices-acme', kind: 'text' });
    db = new pg.Client({ connectionString: running.platform.databaseUrl });
    await db.connect();
  }, 120_000);

  afterAll(async () => {
    await db?.end();
    await running?.close();
  });

  describe.each(MOUNTS)('$name', ({ mount, keyed, badValue }) => {
    it('answers n chat choices, each with its index and finish_reason, choice i sampled with seed + i', async () => {
      const openai = client(mount, keyed);
      const answer = await openai.chat.completions.create({ ...HELLO, n: 3 });
      expect(answer.choices.map((choice) => choice.index)).toEqual([0, 1, 2]);
      // tiny's random weights write to max_tokens: every choice is max_tokens long.
      for (const choice of answer.choices) expect(choice.finish_reason).toBe('length');
      expect(answer.usage!.completion_tokens).toBe(3 * HELLO.max_tokens);
      const single = await openai.chat.completions.create({ ...HELLO, n: 1 });
      expect(answer.usage!.prompt_tokens).toBe(single.usage!.prompt_tokens);
      expect(answer.choices[0]!.message.content).toBe(single.choices[0]!.message.content);
      for (const i of [1, 2]) {
        const alone = await openai.chat.completions.create({
          ...HELLO,
          seed: HELLO.seed + i,
        });
        expect(answer.choices[i]!.message.content).toBe(alone.choices[0]!.message.content);
      }
      expect(new Set(answer.choices.map((choice) => choice.message.content)).size).toBeGreaterThan(1);
    });

    it('streams n chat choices one after another, each chunk with its index, and the usage totals last', async () => {
      const openai = client(mount, keyed);
      const whole = await openai.chat.completions.create({ ...HELLO, n: 2 });
      const chunks = await chunksOf(
        await openai.chat.completions.create({
          ...HELLO,
          n: 2,
          stream: true,
          stream_options: { include_usage: true },
        }),
      );
      const read = readChat(chunks);
      expect(read.texts).toEqual(whole.choices.map((choice) => choice.message.content));
      expect(read.finishes).toEqual(['length', 'length']);
      // Choice 0's text, then choice 1's: nothing interleaved.
      expect(read.order).toEqual([...read.order].sort());
      expect(read.usage).toEqual(whole.usage);
      // Each choice's role chunk opens the stream.
      expect(chunks[0]!.choices[0]).toMatchObject({
        index: 0,
        delta: { role: 'assistant' },
      });
      expect(chunks[1]!.choices[0]).toMatchObject({
        index: 1,
        delta: { role: 'assistant' },
      });
    });

    it('answers n completion choices, streamed and not, with the usage totals', async () => {
      const openai = client(mount, keyed);
      const body = {
        model: 'tiny',
        prompt: 'Once upon',
        max_tokens: 3,
        seed: 5,
        temperature: 1,
      };
      const answer = await openai.completions.create({ ...body, n: 2 });
      expect(answer.choices.map((choice) => [choice.index, choice.finish_reason])).toEqual([
        [0, 'length'],
        [1, 'length'],
      ]);
      expect(answer.usage!.completion_tokens).toBe(6);
      const chunks = await chunksOf(
        await openai.completions.create({
          ...body,
          n: 2,
          stream: true,
          stream_options: { include_usage: true },
        }),
      );
      const texts: string[] = [];
      for (const part of chunks) for (const choice of part.choices) texts[choice.index] = (texts[choice.index] ?? '') + choice.text;
      expect(texts).toEqual(answer.choices.map((choice) => choice.text));
      expect(chunks.find((part) => part.usage)?.usage).toEqual(answer.usage);
    });

    it.each([0, -1, 1.5, 17, '2'])('refuses n = %j with the bad-value status naming n', async (n) => {
      const error = await refusal(
        client(mount, keyed).chat.completions.create({
          ...HELLO,
          n,
        } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming),
      );
      expect(error.status).toBe(badValue);
      expect(error.param).toBe('n');
    });

    it('refuses best_of, which it does not serve, naming it', async () => {
      const error = await refusal(
        client(mount, keyed).completions.create({
          model: 'tiny',
          prompt: 'x',
          max_tokens: 2,
          best_of: 2,
        }),
      );
      expect(error.status).toBe(400);
      expect(error.param).toBe('best_of');
    });

    it('refuses n > 1 on the OCR model naming its engine', async () => {
      const image = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
      const error = await refusal(
        client(mount, keyed).chat.completions.create({
          model: 'ocr-eng',
          n: 2,
          messages: [
            {
              role: 'user',
              content: [{ type: 'image_url', image_url: { url: image } }],
            },
          ],
        }),
      );
      expect(error.status).toBe(badValue);
      expect(error.param).toBe('n');
      expect(error.message).toContain('ocr engine');
    });
  });

  it('streams each choice its own tool call, choice 0 wholly before choice 1', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 12 } }, required: ['city'], additionalProperties: false } },
      },
    ];
    const stream = await client('/inference/text', true).chat.completions.create({
      model: 'tiny',
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
      tools,
      tool_choice: 'required',
      // One call a choice: the random model would write up to four, past max_tokens.
      parallel_tool_calls: false,
      max_tokens: 80,
      seed: 1,
      n: 2,
      stream: true,
    });
    const args = ['', ''];
    const finishes: string[] = [];
    const order: number[] = [];
    for await (const part of stream)
      for (const choice of part.choices) {
        for (const piece of choice.delta.tool_calls ?? []) {
          expect(piece.index).toBe(0);
          args[choice.index] += piece.function?.arguments ?? '';
          order.push(choice.index);
        }
        if (choice.finish_reason) finishes[choice.index] = choice.finish_reason;
      }
    expect(finishes).toEqual(['tool_calls', 'tool_calls']);
    for (const text of args) expect(typeof (JSON.parse(text) as { city: unknown }).city).toBe('string');
    expect(order).toEqual([...order].sort());
  }, 120_000);

  it('writes one usage record per call, with the prompt once and the completions summed', async () => {
    const openai = client('/inference/text', true);
    const answer = await openai.chat.completions.create({
      ...HELLO,
      n: 3,
      messages: [{ role: 'user', content: 'count me once' }],
    });
    const rows = await waitFor('the usage record of the n = 3 call', async () => {
      const found = await db.query<{
        prompt_tokens: number;
        completion_tokens: number;
      }>('select prompt_tokens, completion_tokens from inference.usage_record where key_id = $1 and prompt_tokens = $2', [textKey.id, answer.usage!.prompt_tokens]);
      return found.rows.length > 0 ? found.rows : undefined;
    });
    expect(rows).toEqual([
      {
        prompt_tokens: answer.usage!.prompt_tokens,
        completion_tokens: 3 * HELLO.max_tokens,
      },
    ]);
  });
});

describe('over OpenAI-compatible upstreams', () => {
  let platform: TestPlatform;
  let vllm: LoopbackOpenAiServer;
  let llama: LoopbackOpenAiServer;
  let textKey: string;
  const VLLM = 'vllm-model';
  const LLAMA = 'llama-model';
  // The loopback's choice i > 0 says " <i>" before its last piece (one piece a token).
  const TEXTS = ['Hello, loopback world.', 'Hello, loopback world 1.', 'Hello, loopback world 2.'];

  beforeAll(async () => {
    [vllm, llama] = await Promise.all([
      LoopbackOpenAiServer.start('vllm', [{ id: VLLM, contextLength: 4096 }]),
      LoopbackOpenAiServer.start('llama.cpp', [{ id: LLAMA, contextLength: 4096 }]),
    ]);
    ({ platform, textKey } = await startUpstreamPlatform({
      providers: [
        { id: 'provider_a', name: 'A', engines: loopbackEngines(vllm.url, 'vllm', { tools: true }) },
        { id: 'provider_b', name: 'B', engines: loopbackEngines(llama.url, 'llama.cpp', { tools: true }) },
      ],
      interfaces: everyMount(['provider_a'], ['provider_a', 'provider_b']),
    }));
  }, 60_000);

  afterAll(async () => {
    await platform?.close();
    await Promise.all([vllm?.close(), llama?.close()]);
  });

  afterEach(() => {
    vllm.reset();
    llama.reset();
  });

  describe.each(MOUNTS)('$name to vLLM', ({ mount, keyed }) => {
    const openai = () =>
      new OpenAI({
        baseURL: `${platform.baseUrl}${mount}/v1`,
        apiKey: keyed ? textKey : 'unused',
        maxRetries: 0,
      });

    it('passes n to vLLM and answers every choice it generated', async () => {
      const answer = await openai().chat.completions.create({
        model: VLLM,
        messages: [{ role: 'user', content: 'Hi' }],
        n: 3,
        max_tokens: 6,
      });
      expect(lastGeneration(vllm).body).toMatchObject({ n: 3, stream: true });
      // Choices 1 and 2 are a piece longer: max_tokens cuts them.
      expect(answer.choices.map((choice) => [choice.index, choice.message.content, choice.finish_reason])).toEqual([
        [0, TEXTS[0], 'stop'],
        [1, 'Hello, loopback world 1', 'length'],
        [2, 'Hello, loopback world 2', 'length'],
      ]);
      expect(answer.usage).toEqual({
        ...vllm.lastUsage,
        total_tokens: vllm.lastUsage!.prompt_tokens + vllm.lastUsage!.completion_tokens,
      });
      expect(answer.usage!.completion_tokens).toBe(18);
    });

    it('streams every choice of vLLM interleaved chunks by its index, then the usage totals', async () => {
      const chunks = await chunksOf(
        await openai().chat.completions.create({
          model: VLLM,
          messages: [{ role: 'user', content: 'Hi' }],
          n: 3,
          stream: true,
          stream_options: { include_usage: true },
        }),
      );
      const read = readChat(chunks);
      expect(read.texts).toEqual(TEXTS);
      expect(read.finishes).toEqual(['stop', 'stop', 'stop']);
      expect(read.order.slice(0, 3)).toEqual([0, 1, 2]);
      expect(read.usage).toMatchObject({
        completion_tokens: 6 + 7 + 7,
        prompt_tokens: vllm.lastUsage!.prompt_tokens,
      });
    });

    it('answers n completion choices, streamed and not', async () => {
      const answer = await openai().completions.create({
        model: VLLM,
        prompt: 'Once',
        n: 2,
      });
      expect(lastGeneration(vllm).body).toMatchObject({ n: 2 });
      expect(answer.choices.map((choice) => [choice.index, choice.text, choice.finish_reason])).toEqual([
        [0, TEXTS[0], 'stop'],
        [1, TEXTS[1], 'stop'],
      ]);
      const chunks = await chunksOf(
        await openai().completions.create({
          model: VLLM,
          prompt: 'Once',
          n: 2,
          stream: true,
        }),
      );
      const texts: string[] = [];
      for (const part of chunks) for (const choice of part.choices) texts[choice.index] = (texts[choice.index] ?? '') + choice.text;
      expect(texts).toEqual(TEXTS.slice(0, 2));
    });

    it("gives each streamed choice its own completions logprobs, text_offset counted from that choice's start", async () => {
      const chunks = await chunksOf(await openai().completions.create({ model: VLLM, prompt: 'Once', n: 2, logprobs: 1, stream: true }));
      const texts = ['', ''];
      for (const part of chunks)
        for (const choice of part.choices) {
          if (!choice.text) continue;
          expect(choice.logprobs!.text_offset).toEqual([texts[choice.index]!.length]);
          expect(choice.logprobs!.tokens).toEqual([choice.text]);
          texts[choice.index] += choice.text;
        }
      expect(texts).toEqual(TEXTS.slice(0, 2));
    });

    it('gives each choice its tool calls, streamed and not', async () => {
      const tools: OpenAI.ChatCompletionTool[] = [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            parameters: {
              type: 'object',
              properties: { city: { type: 'string' } },
            },
          },
        },
      ];
      const body = {
        model: VLLM,
        messages: [{ role: 'user' as const, content: 'weather?' }],
        tools,
        tool_choice: 'required' as const,
        n: 2,
      };
      const answer = await openai().chat.completions.create(body);
      for (const [index, choice] of answer.choices.entries()) {
        expect(choice).toMatchObject({
          index,
          finish_reason: 'tool_calls',
          message: {
            content: null,
            tool_calls: [
              {
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"loop"}' },
              },
            ],
          },
        });
      }
      const chunks = await chunksOf(await openai().chat.completions.create({ ...body, stream: true }));
      const calls: string[] = [];
      const finishes: string[] = [];
      for (const part of chunks)
        for (const choice of part.choices) {
          for (const call of choice.delta.tool_calls ?? []) calls[choice.index] = (calls[choice.index] ?? '') + (call.function?.arguments ?? '');
          if (choice.finish_reason) finishes[choice.index] = choice.finish_reason;
        }
      expect(calls).toEqual(['{"city":"loop"}', '{"city":"loop"}']);
      expect(finishes).toEqual(['tool_calls', 'tool_calls']);
    });
  });

  it('repeats the request per choice on a llama.cpp upstream, which has no n', async () => {
    const gateway = new OpenAI({
      baseURL: `${platform.baseUrl}/inference/gateway/v1`,
      apiKey: 'unused',
      maxRetries: 0,
    });
    const answer = await gateway.chat.completions.create({
      model: LLAMA,
      messages: [{ role: 'user', content: 'Hi' }],
      n: 2,
      seed: 9,
    });
    const sent = llama.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body as Record<string, unknown>);
    expect(sent.map((body) => [body.n, body.seed])).toEqual([
      [undefined, 9],
      [undefined, 10],
    ]);
    expect(answer.choices.map((choice) => [choice.index, choice.message.content, choice.finish_reason])).toEqual([
      [0, TEXTS[0], 'stop'],
      [1, TEXTS[0], 'stop'],
    ]);
    expect(answer.usage!.completion_tokens).toBe(2 * llama.lastUsage!.completion_tokens);
    expect(answer.usage!.prompt_tokens).toBe(llama.lastUsage!.prompt_tokens);
  });
});
