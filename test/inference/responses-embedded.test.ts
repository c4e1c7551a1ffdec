import { Ajv } from 'ajv';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferencePlatform, type InferencePlatform } from './inference-test-kit.js';

/**
 * The Responses API over the embedded llama.cpp (random weights: whatever shape the answer has,
 * the grammar gave it), with the official openai client: text.format json_schema is guided
 * generation, a stream's deltas are the final text, and models.retrieve reads the listing.
 */
let running: InferencePlatform;
let textKey: string;

const MODEL = 'tiny';

beforeAll(async () => {
  running = await startInferencePlatform({}, { contextSize: 2048 });
  textKey = await running.platform.issueKey('acme', 'text');
}, 120_000);

afterAll(async () => {
  await running?.close();
});

const MOUNTS = [
  { name: 'Service T', mount: '/inference/text', key: () => textKey },
  { name: 'Service I', mount: '/inference/image', key: () => textKey },
  { name: 'the proxy', mount: '/inference/proxy', key: () => 'ignored' },
  { name: 'the gateway', mount: '/inference/gateway', key: () => 'ignored' },
];

const SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string', maxLength: 8 }, size: { type: 'integer' } },
  required: ['name', 'size'],
  additionalProperties: false,
};

describe.each(MOUNTS)('$name', ({ mount, key }) => {
  const client = () => new OpenAI({ baseURL: `${running.platform.baseUrl}${mount}/v1`, apiKey: key(), maxRetries: 0 });

  it('answers text.format json_schema with JSON the schema accepts', async () => {
    const validate = new Ajv().compile(SCHEMA);
    const response = await client().responses.create({
      model: MODEL,
      input: 'Describe a thing',
      max_output_tokens: 80,
      text: { format: { type: 'json_schema', name: 'thing', schema: SCHEMA, strict: true } },
    });
    expect(response.status).toBe('completed');
    expect(validate(JSON.parse(response.output_text))).toBe(true);
  });

  it('refuses a schema the engine cannot enforce, naming text.format', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string' } }, notAKeyword: true };
    const refused = client().responses.create({ model: MODEL, input: 'x', text: { format: { type: 'json_schema', name: 'thing', schema } } });
    const bad = mount === '/inference/text' || mount === '/inference/gateway' ? 422 : 400;
    await expect(refused).rejects.toMatchObject({ status: bad, code: 'unsupported_parameter', param: 'text.format' });
  });

  it('streams deltas that add up to the final text, with usage at the end', async () => {
    const stream = client().responses.stream({ model: MODEL, input: 'Write', max_output_tokens: 12 });
    let text = '';
    stream.on('response.output_text.delta', (event) => (text += event.delta));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe(text);
    expect(['completed', 'incomplete']).toContain(final.status);
    expect(final.usage!.output_tokens).toBeGreaterThan(0);
    expect(final.usage!.total_tokens).toBe(final.usage!.input_tokens + final.usage!.output_tokens);
  });

  it('retrieves the model as it is listed', async () => {
    const listed = (await client().models.list()).data.find((m) => m.id === MODEL);
    expect(await client().models.retrieve(MODEL)).toEqual(listed);
  });
});
