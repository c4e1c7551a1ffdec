import { rm } from 'node:fs/promises';
import { Ajv } from 'ajv';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llamaInferenceConfig, modelsReady } from '../support/inference-config.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

/**
 * Guided output and sampling on the embedded llama.cpp: the model has random weights, so whatever
 * shape its answer has, the grammar gave it. Service I's parameters the engine has no sampler
 * for are refused, never ignored; Service T does not take them at all.
 */
let platform: TestPlatform;
let modelsDir: string;
let textKey: string;

const MODEL = 'tiny';

beforeAll(async () => {
  const built = await llamaInferenceConfig();
  modelsDir = built.modelsDir;
  platform = await startTestPlatform({ inference: built.config });
  textKey = await platform.issueKey('acme', 'text');
  await modelsReady(platform.baseUrl);
}, 120_000);

afterAll(async () => {
  await platform?.close();
  if (modelsDir) await rm(modelsDir, { recursive: true, force: true });
});

const gateway = () => new OpenAI({ baseURL: `${platform.baseUrl}/inference/gateway/v1`, apiKey: 'unused', maxRetries: 0 });
const serviceI = () => new OpenAI({ baseURL: `${platform.baseUrl}/inference/image/v1`, apiKey: textKey, maxRetries: 0 });
const serviceT = () => new OpenAI({ baseURL: `${platform.baseUrl}/inference/text/v1`, apiKey: textKey, maxRetries: 0 });

// The openai SDK's types lack the guided_* and Service I extensions; it sends unknown body fields as they are.
type Extended = OpenAI.ChatCompletionCreateParamsNonStreaming & Record<string, unknown>;

function chat(openai: OpenAI, extra: Record<string, unknown>) {
  return openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Answer now' }], max_tokens: 60, seed: 11, ...extra } as Extended);
}

async function refusal(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

describe('guided output on the gateway', () => {
  it('guided_choice answers exactly one of the choices', async () => {
    const choices = ['alpha', 'beta', 'gamma delta'];
    const seen = new Set<string>();
    for (const seed of [1, 2, 3, 4]) {
      const done = await chat(gateway(), { guided_choice: choices, seed, temperature: 1 });
      expect(choices).toContain(done.choices[0]!.message.content);
      expect(done.choices[0]!.finish_reason).toBe('stop');
      seen.add(done.choices[0]!.message.content!);
    }
    expect(seen.size).toBeGreaterThan(0);
  });

  it('guided_regex answers a string matching the whole pattern, streamed and not', async () => {
    const done = await chat(gateway(), { guided_regex: '[0-9]{3}-[a-z]{2}' });
    expect(done.choices[0]!.message.content).toMatch(/^[0-9]{3}-[a-z]{2}$/);
    expect(done.choices[0]!.finish_reason).toBe('stop');
    const stream = await gateway().chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Answer now' }],
      max_tokens: 60,
      seed: 11,
      stream: true,
      guided_regex: '(yes|no) [A-Z]{2,4}!?',
    } as OpenAI.ChatCompletionCreateParamsStreaming & Record<string, unknown>);
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    expect(text).toMatch(/^(yes|no) [A-Z]{2,4}!?$/);
  });

  const SCHEMA = {
    type: 'object',
    properties: {
      verdict: { type: 'string', enum: ['pass', 'fail'] },
      score: { type: 'integer' },
      note: { type: 'string', maxLength: 8 },
      tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, maxItems: 2 },
      ok: { type: 'boolean' },
    },
    required: ['verdict', 'score', 'note', 'tags', 'ok'],
    additionalProperties: false,
  };
  const validate = new Ajv().compile(SCHEMA);

  it('guided_json yields JSON that validates against the schema', async () => {
    const done = await chat(gateway(), { guided_json: SCHEMA, max_tokens: 200 });
    expect(done.choices[0]!.finish_reason).toBe('stop');
    const parsed: unknown = JSON.parse(done.choices[0]!.message.content!);
    expect(validate(parsed), JSON.stringify(validate.errors)).toBe(true);
  });

  it('response_format json_schema likewise, and json_object gives an object', async () => {
    const done = await chat(gateway(), { response_format: { type: 'json_schema', json_schema: { name: 'verdict', schema: SCHEMA, strict: true } }, max_tokens: 200 });
    expect(validate(JSON.parse(done.choices[0]!.message.content!)), JSON.stringify(validate.errors)).toBe(true);
    const object = await chat(gateway(), { response_format: { type: 'json_object' }, max_tokens: 200, seed: 5 });
    if (object.choices[0]!.finish_reason === 'stop') {
      const parsed: unknown = JSON.parse(object.choices[0]!.message.content!);
      expect(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)).toBe(true);
    } else expect(object.choices[0]!.message.content!.trimStart().startsWith('{')).toBe(true);
  });

  it('bounds and patterns are enforced: integers of any width, one-sided, whole-number bounds on numbers, a pattern', async () => {
    const bounded = {
      type: 'object',
      properties: {
        size: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
        count: { type: 'integer', minimum: 0 },
        share: { type: 'number', minimum: 0, maximum: 1 },
        id: { type: 'string', pattern: '^[a-z]{3}[0-9]$' },
      },
      required: ['size', 'count', 'share', 'id'],
      additionalProperties: false,
    };
    const check = new Ajv().compile(bounded);
    // Service T takes the schema as response_format only.
    const asFormat = { response_format: { type: 'json_schema', json_schema: { name: 'bounded', schema: bounded } } };
    for (const [openai, seed, guide] of [[serviceI(), 1, { guided_json: bounded }], [gateway(), 2, { guided_json: bounded }], [serviceT(), 3, asFormat]] as const) {
      const done = await chat(openai, { ...guide, seed, temperature: 1, max_tokens: 200 });
      expect(done.choices[0]!.finish_reason, done.choices[0]!.message.content!).toBe('stop');
      expect(check(JSON.parse(done.choices[0]!.message.content!)), `${done.choices[0]!.message.content} ${JSON.stringify(check.errors)}`).toBe(true);
    }
  });

  it('a schema keyword the grammar cannot enforce is refused naming it, never ignored', async () => {
    // A number bound that is not a whole number has no digit-range grammar here.
    const bounded = { type: 'object', properties: { score: { type: 'number', minimum: 0.5, maximum: 2 } }, required: ['score'] };
    const onI = await refusal(chat(serviceI(), { guided_json: bounded }));
    expect(onI).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'guided_json' });
    expect(onI.message).toContain('minimum');
    expect(onI.message).toContain('/properties/score');
    expect(onI.message).toContain('llama engine');
    const patterned = { type: 'object', properties: { id: { type: 'string', pattern: '^(?=a)[a-z]+$' } } };
    const onGateway = await refusal(chat(gateway(), { response_format: { type: 'json_schema', json_schema: { name: 'id', schema: patterned } } }));
    expect(onGateway).toMatchObject({ status: 422, code: 'unsupported_parameter', param: 'guided_json' });
    expect(onGateway.message).toContain('pattern');
  });

  it('anyOf of two object shapes is enforced as their alternation', async () => {
    const either = {
      anyOf: [
        { type: 'object', properties: { cat: { type: 'string', maxLength: 8 } }, required: ['cat'], additionalProperties: false },
        { type: 'object', properties: { dog: { type: 'boolean' } }, required: ['dog'], additionalProperties: false },
      ],
    };
    const check = new Ajv().compile(either);
    for (const seed of [1, 2, 3]) {
      const done = await chat(gateway(), { guided_json: either, max_tokens: 80, seed, temperature: 1 });
      expect(done.choices[0]!.finish_reason).toBe('stop');
      const parsed: unknown = JSON.parse(done.choices[0]!.message.content!);
      expect(check(parsed), JSON.stringify(check.errors)).toBe(true);
    }
  });

  it('two guided parameters at once are refused, 422 on the gateway and 400 on Service I', async () => {
    const both = { guided_choice: ['a', 'b'], guided_regex: '[a-z]+' };
    const onGateway = await refusal(chat(gateway(), both));
    expect(onGateway).toMatchObject({ status: 422, code: 'invalid_value', param: 'guided_choice' });
    expect(onGateway.message).toMatch(/Only one of/);
    const withFormat = await refusal(chat(serviceI(), { guided_json: { type: 'object' }, response_format: { type: 'json_object' } }));
    expect(withFormat).toMatchObject({ status: 400, code: 'invalid_value', param: 'response_format' });
  });
});

describe('Service I parameters on the llama engine', () => {
  it('a regex outside the supported subset (a backreference) is 400 naming guided_regex', async () => {
    for (const pattern of ['(a)\\1', '(?=x)y']) {
      const error = await refusal(chat(serviceI(), { guided_regex: pattern }));
      expect(error, pattern).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ param: 'guided_regex', code: 'invalid_value' });
      expect(error.message).toMatch(/guided_regex/);
    }
  });

  it.each([
    ['mirostat', 1],
    ['tfs', 0.9],
    ['typical_p', 0.5],
    ['top_a', 0.2],
  ] as const)('%s is refused 400 unsupported_parameter naming it and the engine', async (name, value) => {
    const error = await refusal(chat(serviceI(), { [name]: value }));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, code: 'unsupported_parameter', param: name, type: 'invalid_request_error' });
    expect(error.message).toContain(name);
    expect(error.message).toContain('llama engine');
  });

  it('mirostat 0 (off) and the parameters the engine honours are taken', async () => {
    const done = await chat(serviceI(), { mirostat: 0, dry_multiplier: 0.8, dry_base: 1.75, dry_allowed_length: 2, no_repeat_ngram_size: 3, top_k: 20, min_p: 0.05, max_tokens: 4 });
    expect(done.choices[0]!.finish_reason).toBe('length');
    expect(done.usage!.completion_tokens).toBe(4);
  });

  it.each(['mirostat', 'tfs', 'typical_p', 'top_a', 'guided_json', 'guided_choice'])('Service T does not take %s: 400 unknown_parameter', async (name) => {
    const value = name === 'guided_json' ? { type: 'object' } : name === 'guided_choice' ? ['a'] : name === 'mirostat' ? 1 : 0.5;
    const error = await refusal(chat(serviceT(), { [name]: value }));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, code: 'unknown_parameter', param: name });
  });
});

describe('sampling', () => {
  it('max_tokens ends the answer with finish_reason length and that many tokens', async () => {
    const done = await chat(gateway(), { max_tokens: 7, temperature: 0 });
    expect(done.choices[0]!.finish_reason).toBe('length');
    expect(done.usage!.completion_tokens).toBe(7);
  });

  it('a stop sequence ends the text before it, with finish_reason stop', async () => {
    const free = await chat(gateway(), { max_tokens: 40, temperature: 0 });
    const text = free.choices[0]!.message.content!;
    // A stop string taken from the middle of what the model says unhindered.
    const chars = [...text];
    let stop = '';
    for (let at = Math.floor(chars.length / 2); at < chars.length - 1 && !stop; at++) {
      const candidate = chars.slice(at, at + 2).join('');
      if (candidate.trim().length === 2 && text.indexOf(candidate) > 0) stop = candidate;
    }
    expect(stop, `no stop string in ${JSON.stringify(text)}`).not.toBe('');
    const stopped = await chat(gateway(), { max_tokens: 40, temperature: 0, stop: [stop] });
    expect(stopped.choices[0]!.finish_reason).toBe('stop');
    expect(stopped.choices[0]!.message.content).toBe(text.slice(0, text.indexOf(stop)));
    expect(stopped.choices[0]!.message.content).not.toContain(stop);
  });

  it('the same seed gives the same output, streamed and not', async () => {
    const params = { max_tokens: 12, seed: 4242, temperature: 1.2, top_p: 0.95 };
    const first = await chat(gateway(), params);
    const second = await chat(gateway(), params);
    expect(second.choices[0]!.message.content).toBe(first.choices[0]!.message.content);
    const stream = await gateway().chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Answer now' }],
      ...params,
      stream: true,
    });
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    expect(text).toBe(first.choices[0]!.message.content);
    const raw = await serviceI().completions.create({ model: MODEL, prompt: 'Once', ...params });
    const rawAgain = await serviceI().completions.create({ model: MODEL, prompt: 'Once', ...params });
    expect(rawAgain.choices[0]!.text).toBe(raw.choices[0]!.text);
  });
});
