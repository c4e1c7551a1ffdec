import OpenAI from 'openai';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseUrlOf, keyOf, ROUTES, startClientPlatform, VLLM_REPLY, type ClientPlatform } from './client-platform.js';

/**
 * The official openai client, as a user writes it, on every mount over the embedded llama.cpp and
 * over a vLLM-format upstream; images over a WebUI-format upstream. The embedded model has random
 * weights, so its text is checked by length and shape, the upstream's to the letter.
 */
let running: ClientPlatform;

beforeAll(async () => {
  running = await startClientPlatform();
}, 120_000);

afterAll(async () => {
  await running?.close();
});

const WEATHER_TOOL: OpenAI.ChatCompletionFunctionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  },
};

describe.each(ROUTES)('$name over $engine', ({ mount, keyed, model, embedded }) => {
  const openai = () => new OpenAI({ baseURL: baseUrlOf(running, mount), apiKey: keyOf(running, keyed) });

  it('chat.completions.create, whole and streamed', async () => {
    const whole = await openai().chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello' }], max_tokens: 6, temperature: 0, seed: 1 });
    const content = whole.choices[0]!.message.content;
    if (embedded) expect(whole.usage!.completion_tokens).toBe(6);
    else expect(content).toBe(VLLM_REPLY);
    const stream = await openai().chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello' }], max_tokens: 6, temperature: 0, seed: 1, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(content);
  });

  it('chat.completions.create with n: 2, whole and streamed', async () => {
    const body = { model, messages: [{ role: 'user' as const, content: 'Say hello' }], max_tokens: 6, seed: 1, n: 2 };
    const whole = await openai().chat.completions.create(body);
    expect(whole.choices.map((choice) => choice.index)).toEqual([0, 1]);
    if (embedded) expect(whole.usage!.completion_tokens).toBe(12);
    // The loopback's second choice is a token longer, cut by max_tokens.
    else expect(whole.choices.map((choice) => [choice.message.content, choice.finish_reason])).toEqual([
        [VLLM_REPLY, 'stop'],
        ['Hello, loopback world 1', 'length'],
      ]);
    const texts = ['', ''];
    for await (const chunk of await openai().chat.completions.create({ ...body, stream: true })) for (const choice of chunk.choices) texts[choice.index] += choice.delta.content ?? '';
    expect(texts).toEqual(whole.choices.map((choice) => choice.message.content));
  });

  it('responses.create, whole and streamed', async () => {
    const whole = await openai().responses.create({ model, input: 'Say hello', max_output_tokens: 16, temperature: 0 });
    expect(whole.status).toBe(embedded ? 'incomplete' : 'completed');
    if (!embedded) expect(whole.output_text).toBe(VLLM_REPLY);
    const stream = await openai().responses.create({ model, input: 'Say hello', max_output_tokens: 16, temperature: 0, stream: true });
    let deltas = '';
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') deltas += event.delta;
      if (event.type === 'response.completed' || event.type === 'response.incomplete') final = event.response;
    }
    // output_text is the client's own convenience on whole responses; a streamed one has its output items.
    const message = final?.output.find((item) => item.type === 'message');
    expect(message?.content.map((part) => (part.type === 'output_text' ? part.text : '')).join('')).toBe(deltas);
    if (!embedded) expect(deltas).toBe(VLLM_REPLY);
  });

  it('models.retrieve', async () => {
    const found = await openai().models.retrieve(model);
    expect(found).toMatchObject({ id: model, object: 'model' });
    await expect(openai().models.retrieve('nowhere')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('images.generate over a WebUI-format upstream', () => {
  it('the gateway lists the checkpoints and generates with one of them', async () => {
    const openai = new OpenAI({ baseURL: baseUrlOf(running, '/inference/gateway'), apiKey: 'unused' });
    const models = (await openai.models.list()).data.map((entry) => entry.id);
    expect(models).toContain('sd_xl_base_1.0');
    const answer = await openai.images.generate({ model: 'sd_xl_base_1.0', prompt: 'a lighthouse', n: 1, size: '256x256' });
    const meta = await sharp(Buffer.from(answer.data![0]!.b64_json!, 'base64')).metadata();
    expect([meta.width, meta.height]).toEqual([256, 256]);
  });
});
