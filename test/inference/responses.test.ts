import OpenAI from 'openai';
import pg from 'pg';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LoopbackOpenAiServer } from '../support/loopback-openai-server.js';
import type { TestPlatform } from '../support/platform-harness.js';
import { allIdle, everyMount, loopbackEngines, startUpstreamPlatform, waitFor } from './inference-test-kit.js';
import { lastGeneration, onGenerationOnly } from './upstream-behaviour.js';

/**
 * The Responses API (POST /v1/responses) and models.retrieve on the four mounts, with the official
 * openai client, over a loopback vLLM-format upstream: the answer is exactly the upstream's text
 * and usage in OpenAI's Response object and event stream, the upstream is asked through chat
 * completions, and what the platform cannot serve is refused in OpenAI's error shape.
 */
let platform: TestPlatform;
let vllm: LoopbackOpenAiServer;
let vision: LoopbackOpenAiServer;
let textKey: string;
let db: pg.Client;

const MODEL = 'vllm-model';
const VISION_MODEL = 'vllm-vision';
const REPLY = 'Hello, loopback world.';

beforeAll(async () => {
  // vLLM's listing does not say which models take images; llama.cpp's does.
  [vllm, vision] = await Promise.all([
    LoopbackOpenAiServer.start('vllm', [{ id: MODEL, contextLength: 4096 }]),
    LoopbackOpenAiServer.start('llama.cpp', [{ id: VISION_MODEL, contextLength: 4096, vision: true }]),
  ]);
  ({ platform, textKey } = await startUpstreamPlatform({
    providers: [
      { id: 'provider_a', name: 'A', engines: loopbackEngines(vllm.url, 'vllm') },
      { id: 'provider_b', name: 'B', engines: loopbackEngines(vision.url, 'llama.cpp') },
    ],
    interfaces: everyMount(['provider_a', 'provider_b']),
  }));
  db = new pg.Client({ connectionString: platform.databaseUrl });
  await db.connect();
}, 60_000);

afterAll(async () => {
  await db?.end();
  await platform?.close();
  await Promise.all([vllm?.close(), vision?.close()]);
});

afterEach(() => {
  vllm.reset();
  vision.reset();
});

const MOUNTS = [
  { name: 'Service T', mount: '/inference/text', key: () => textKey, usage: 'service_t' },
  { name: 'Service I', mount: '/inference/image', key: () => textKey, usage: 'service_i' },
  { name: 'the proxy', mount: '/inference/proxy', key: () => 'ignored', usage: 'proxy' },
  { name: 'the gateway', mount: '/inference/gateway', key: () => 'ignored', usage: 'gateway' },
];

function expectedUsage() {
  const { prompt_tokens, completion_tokens } = vllm.lastUsage!;
  return { input_tokens: prompt_tokens, output_tokens: completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

describe.each(MOUNTS)('$name', ({ mount, key, usage }) => {
  const client = () => new OpenAI({ baseURL: `${platform.baseUrl}${mount}/v1`, apiKey: key(), maxRetries: 0 });

  it('answers responses.create with a Response object of the upstream text and usage, asking the upstream as chat', async () => {
    const response = await client().responses.create({ model: MODEL, instructions: 'Be brief.', input: 'Say hello', max_output_tokens: 20, temperature: 0.5, metadata: { run: 'one' } });
    expect(response.id).toMatch(/^resp_/);
    expect(response).toMatchObject({ object: 'response', status: 'completed', model: MODEL, error: null, incomplete_details: null, metadata: { run: 'one' }, store: true });
    expect(response.output).toHaveLength(1);
    expect(response.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: REPLY, annotations: [] }] });
    expect(response.output_text).toBe(REPLY);
    expect(response.usage).toMatchObject(expectedUsage());
    const sent = lastGeneration(vllm);
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body).toMatchObject({
      model: MODEL,
      max_tokens: 20,
      temperature: 0.5,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say hello' },
      ],
    });
  });

  it('streams the events in OpenAI order with rising sequence numbers, which responses.stream assembles', async () => {
    const stream = await client().responses.create({ model: MODEL, input: 'Say hello', stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const types = events.map((e) => e.type);
    const deltas = types.filter((t) => t === 'response.output_text.delta').length;
    expect(deltas).toBeGreaterThan(1);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...Array(deltas).fill('response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const text = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('');
    expect(text).toBe(REPLY);
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(completed.response.usage).toMatchObject(expectedUsage());
    expect(completed.response.id).toBe((events[0] as OpenAI.Responses.ResponseCreatedEvent).response.id);

    const helper = client().responses.stream({ model: MODEL, input: [{ role: 'user', content: [{ type: 'input_text', text: 'Say hello' }] }] });
    let streamed = '';
    helper.on('response.output_text.delta', (event) => (streamed += event.delta));
    const final = await helper.finalResponse();
    expect(streamed).toBe(REPLY);
    expect(final.output_text).toBe(REPLY);
    expect(final.status).toBe('completed');
  });

  it('says incomplete, with max_output_tokens as the reason, when the answer was cut at the limit', async () => {
    const response = await client().responses.create({ model: MODEL, input: 'Say hello', max_output_tokens: 2 });
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(response.output[0]).toMatchObject({ status: 'incomplete' });
    const events: string[] = [];
    for await (const event of await client().responses.create({ model: MODEL, input: 'Say hello', max_output_tokens: 2, stream: true })) events.push(event.type);
    expect(events.at(-1)).toBe('response.incomplete');
  });

  it('reads a conversation of input items (developer, assistant output_text) and null as absent', async () => {
    await client().responses.create({
      model: MODEL,
      input: [
        { role: 'developer', content: 'Answer in English.' },
        { role: 'user', content: 'Hi' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello!', annotations: [] }] } as never,
        { role: 'user', content: [{ type: 'input_text', text: 'Again' }] },
      ],
      temperature: null,
      top_p: null,
      tools: null,
      previous_response_id: null,
    } as never);
    const sent = lastGeneration(vllm).body;
    expect(sent.messages).toEqual([
      { role: 'system', content: 'Answer in English.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'Again' },
    ]);
    expect(sent).not.toHaveProperty('temperature');
    expect(sent).not.toHaveProperty('top_p');
  });

  it('sends input_image parts to a vision model under the image rules of chat', async () => {
    const png = await sharp({ create: { width: 3, height: 2, channels: 3, background: { r: 200, g: 10, b: 10 } } }).png().toBuffer();
    const uri = `data:image/png;base64,${png.toString('base64')}`;
    await client().responses.create({
      model: VISION_MODEL,
      instructions: 'Describe it.',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: uri, detail: 'auto' }] }],
    });
    expect(lastGeneration(vision).body.messages).toEqual([
      { role: 'system', content: 'Describe it.' },
      { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: uri } }] },
    ]);
    vision.reset();
    const bad = mount === '/inference/text' || mount === '/inference/gateway' ? 422 : 400;
    const metadata = client().responses.create({
      model: VISION_MODEL,
      instructions: 'Describe it.',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'x' }, { type: 'input_image', image_url: 'http://169.254.169.254/latest/meta-data/', detail: 'auto' }] }],
    });
    // The parameter at fault is named as the client sent it, in input.
    const wanted = mount === '/inference/gateway' ? { status: 400, code: 'image_url_not_supported' } : { status: bad, code: 'invalid_value' };
    await expect(metadata).rejects.toMatchObject({ ...wanted, param: 'input[0].content[1].image_url' });
    expect(vision.requests.filter((r) => r.method === 'POST')).toHaveLength(0);
  });

  it('records the usage of a response as chat usage is recorded', async () => {
    const before = new Date();
    const response = await client().responses.create({ model: MODEL, input: 'Say hello' });
    const row = await waitFor('the usage record', async () => {
      const { rows } = await db.query<{ interface: string; prompt_tokens: number; completion_tokens: number; status: number; provider: string }>(
        'select * from inference.usage_record where occurred_at >= $1 and interface = $2 and status = 200 order by occurred_at desc limit 1',
        [before, usage],
      );
      return rows[0];
    });
    expect(row).toMatchObject({ provider: 'provider_a', prompt_tokens: response.usage!.input_tokens, completion_tokens: response.usage!.output_tokens });
  });

  it('refuses in OpenAI error shape what it cannot serve or find: unknown responses and items, unknown fields, tools', async () => {
    const lookup = client().responses.retrieve('resp_abc');
    await expect(lookup).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(lookup).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
    // Made one at a time: a rejection waiting in an array before its turn is unhandled.
    for (const call of [() => client().responses.delete('resp_abc'), () => client().responses.inputItems.list('resp_abc'), () => client().responses.cancel('resp_abc')]) {
      await expect(call()).rejects.toMatchObject({ status: 404, code: 'response_not_found', message: expect.stringContaining("'resp_abc'") });
    }

    await expect(client().responses.create({ model: MODEL, input: 'x', previous_response_id: 'resp_abc' })).rejects.toMatchObject({
      status: 400,
      code: 'previous_response_not_found',
      param: 'previous_response_id',
    });
    await expect(client().responses.create({ model: MODEL, input: 'x', background: true })).rejects.toMatchObject({ status: 400, code: 'unknown_parameter', param: 'background' });
    await expect(client().responses.create({ model: MODEL, input: [{ type: 'item_reference', id: 'msg_abc' }] })).rejects.toMatchObject({
      status: 400,
      code: 'item_not_found',
      param: 'input[0]',
      message: expect.stringContaining("'msg_abc'"),
    });
    await expect(client().responses.create({ model: MODEL, input: [{ type: 'reasoning', id: 'rs_abc', summary: [] }] })).rejects.toMatchObject({
      param: 'input[0]',
      message: expect.stringContaining('input items of type "reasoning" are not served here'),
    });
    await expect(client().responses.create({ model: MODEL })).rejects.toMatchObject({ status: 400, code: 'missing_parameter', param: 'input' });
    await expect(client().responses.create({ model: 'no-such-model', input: 'x' })).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
    const bad = mount === '/inference/text' || mount === '/inference/gateway' ? 422 : 400;
    await expect(client().responses.create({ model: MODEL, input: 'x', temperature: 3 })).rejects.toMatchObject({ status: bad, param: 'temperature' });
    await expect(client().responses.create({ model: MODEL, input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'file:///etc/passwd', detail: 'auto' }] }] })).rejects.toMatchObject({
      status: bad,
    });
    vllm.reset();
    const tools = [{ type: 'function' as const, name: 'weather', parameters: { type: 'object', properties: {} }, strict: false }];
    // A model that cannot call tools says so; it never answers as if there were none.
    await expect(client().responses.create({ model: MODEL, input: 'x', tools })).rejects.toMatchObject({ status: bad, param: 'tools', message: expect.stringContaining('cannot call tools') });
    expect(vllm.requests.filter((r) => r.method === 'POST')).toHaveLength(0);
    // With tool_choice none the tools may not be called: text is the answer.
    const text = await client().responses.create({ model: MODEL, input: 'x', tools, tool_choice: 'none' });
    expect(text.output_text).toBe(REPLY);
    // Nor does it take a conversation with a call and its result.
    const calledBefore = [
      { role: 'user' as const, content: 'Weather?' },
      { type: 'function_call' as const, call_id: 'call_1', name: 'weather', arguments: '{}' },
      { type: 'function_call_output' as const, call_id: 'call_1', output: '3 °C' },
    ];
    await expect(client().responses.create({ model: MODEL, input: calledBefore })).rejects.toMatchObject({ status: bad, param: 'input[1]', message: expect.stringContaining('cannot call tools') });
    expect(vllm.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('ends a stream the upstream breaks with response.failed, which the client throws as an APIError, and keeps it failed', async () => {
    onGenerationOnly(vllm, { streamErrorAfter: { chunks: 2, code: 500, message: 'engine fault', type: 'InternalServerError' } });
    const stream = await client().responses.create({ model: MODEL, input: 'Say hello', stream: true });
    const types: string[] = [];
    let id = '';
    const failure = await (async () => {
      try {
        for await (const event of stream) {
          types.push(event.type);
          if (event.type === 'response.created') id = event.response.id;
          if (event.type === 'response.failed') expect(event.response).toMatchObject({ status: 'failed', error: { code: 'upstream_error' }, output: [{ type: 'message', status: 'incomplete' }] });
        }
      } catch (error) {
        return error;
      }
    })();
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(types.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    expect(types.at(-1)).toBe('response.failed');
    await expect(client().responses.retrieve(id)).resolves.toMatchObject({ id, status: 'failed', error: { code: 'upstream_error' } });
    await allIdle(platform.baseUrl, 5_000);
  });

  it('opens a stream as soon as the upstream has the request, and stops the generation when the client goes away (nothing kept)', async () => {
    let release!: () => void;
    let id = '';
    vllm.behaviour.firstChunkGate = new Promise<void>((resolve) => (release = resolve));
    const before = new Date();
    try {
      const stream = await client().responses.create({ model: MODEL, input: 'Say hello', stream: true });
      const iterator = stream[Symbol.asyncIterator]();
      // No token has come yet: the opening events are there at once.
      const created = (await iterator.next()).value;
      expect(created).toMatchObject({ type: 'response.created', sequence_number: 0 });
      id = created.response.id;
      expect((await iterator.next()).value).toMatchObject({ type: 'response.in_progress' });
      stream.controller.abort();
      await allIdle(platform.baseUrl, 10_000);
    } finally {
      release();
    }
    const row = await waitFor('the record of the abandoned response', async () => {
      const { rows } = await db.query<{ status: number; error_code: string }>('select * from inference.usage_record where occurred_at >= $1 and interface = $2 and status = 499', [before, usage]);
      return rows[0];
    });
    expect(row.error_code).toBe('client_closed');
    // A response the client left is not kept: the record is written after the handler gave up on it.
    await expect(client().responses.retrieve(id)).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
  });

  it('retrieves a model with models.retrieve, and answers an unknown one 404 model_not_found', async () => {
    const model = await client().models.retrieve(MODEL);
    expect(model).toMatchObject({ id: MODEL, object: 'model', owned_by: 'provider_a' });
    const listed = (await client().models.list()).data.find((m) => m.id === MODEL);
    expect(model).toEqual(listed);
    const unknown = client().models.retrieve('org/no-such-model');
    await expect(unknown).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(unknown).rejects.toMatchObject({ status: 404, code: 'model_not_found', type: 'invalid_request_error' });
  });
});
