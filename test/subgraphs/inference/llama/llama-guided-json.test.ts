import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError, type GenerationInput, type GenerationRequest } from '../../../../subgraphs/inference/engine/text-engine.js';
import type { LlamaEngine } from '../../../../subgraphs/inference/engines/llama/llama-engine.js';
import { startRandomModelEngine, type RandomModelEngine } from './random-model-engine.js';
import { collect } from './collect.js';

let engine: LlamaEngine;
let fixture: RandomModelEngine | undefined;

const CHAT: GenerationInput = { kind: 'chat', messages: [{ role: 'user', content: 'Write a short note' }] };
const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];

function guided(schema: Record<string, unknown>, seed: number, maxTokens = 120): GenerationRequest {
  return {
    model: 'good',
    input: CHAT,
    sampling: { maxTokens, seed, temperature: 1 },
    guided: { kind: 'json', schema },
    signal: new AbortController().signal,
  };
}

/** Every answer over several seeds, parsed, with the seed beside it for a failure's message. */
async function answers(schema: Record<string, unknown>, maxTokens?: number): Promise<{ seed: number; text: string; value: unknown }[]> {
  const out = [];
  for (const seed of SEEDS) {
    const { text, finishReason } = await collect(engine.generate(guided(schema, seed, maxTokens)));
    expect(finishReason, `seed ${seed}: ${text}`).toBe('stop');
    out.push({ seed, text, value: JSON.parse(text) as unknown });
  }
  return out;
}

beforeAll(async () => {
  fixture = await startRandomModelEngine('llama-guided-json', { 'good.gguf': { seed: 11 } });
  ({ engine } = fixture);
}, 120_000);

afterAll(async () => {
  await fixture?.close();
});

describe('guided_json on the llama engine', () => {
  it('keeps a string to its minLength/maxLength in characters of valid UTF-8, whatever the seed (no broken bytes, no dropped control tokens)', async () => {
    const schema = { type: 'object', properties: { note: { type: 'string', minLength: 10, maxLength: 10 } }, required: ['note'], additionalProperties: false };
    for (const { seed, text, value } of await answers(schema)) {
      const note = (value as { note: string }).note;
      expect(note, `seed ${seed}: ${text}`).not.toContain('\uFFFD');
      expect([...note].length, `seed ${seed}: ${text}`).toBe(10);
      // JavaScript's length (UTF-16 units), which zod's .max() checks, agrees: no character outside the BMP.
      expect(note.length, `seed ${seed}: ${text}`).toBe(10);
    }
  }, 240_000);

  it('enforces integer minimum/maximum, exclusive bounds and multipleOf: every answer validates', async () => {
    const schema = {
      type: 'object',
      properties: {
        score: { type: 'integer', minimum: 3, maximum: 7 },
        level: { type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 100, multipleOf: 5 },
        scores: { type: 'array', items: { type: 'integer', minimum: -2, maximum: 2 }, minItems: 1, maxItems: 3 },
      },
      required: ['score', 'level', 'scores'],
      additionalProperties: false,
    };
    const validate = new Ajv().compile(schema);
    for (const { seed, text, value } of await answers(schema)) expect(validate(value), `seed ${seed}: ${text} ${JSON.stringify(validate.errors)}`).toBe(true);
  }, 240_000);

  /** Every answer over the seeds validates against the schema (ajv), and the values are returned for further checks. */
  async function validAnswers(schema: Record<string, unknown>): Promise<unknown[]> {
    const validate = new Ajv().compile(schema);
    const values = [];
    // Five numbers of up to 16 fractional digits each, at a token a digit or two.
    for (const { seed, text, value } of await answers(schema, 320)) {
      expect(validate(value), `seed ${seed}: ${text} ${JSON.stringify(validate.errors)}`).toBe(true);
      values.push(value);
    }
    return values;
  }

  it("enforces integer ranges of any width: zod's .int() bounds (±2^53 − 1), one-sided bounds, negative ranges", async () => {
    await validAnswers({
      type: 'object',
      properties: {
        size: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
        count: { type: 'integer', minimum: 0 },
        below: { type: 'integer', exclusiveMaximum: -1000 },
        span: { type: 'integer', minimum: -123456, maximum: -17 },
        wide: { type: 'integer', exclusiveMinimum: 99, maximum: 10_000_000 },
      },
      required: ['size', 'count', 'below', 'span', 'wide'],
      additionalProperties: false,
    });
  }, 240_000);

  it('enforces whole-number bounds on numbers (0..1, -1..1 exclusive, 0..100, one-sided), fractions included', async () => {
    const values = await validAnswers({
      type: 'object',
      properties: {
        share: { type: 'number', minimum: 0, maximum: 1 },
        tilt: { type: 'number', exclusiveMinimum: -1, exclusiveMaximum: 1 },
        percent: { type: 'number', minimum: 0, maximum: 100 },
        positive: { type: 'number', exclusiveMinimum: 0 },
        cold: { type: 'number', maximum: -40 },
      },
      required: ['share', 'tilt', 'percent', 'positive', 'cold'],
      additionalProperties: false,
    });
    // Fractions are written, not only whole numbers (random weights over 8 seeds and five fields).
    expect(values.some((value) => Object.values(value as Record<string, number>).some((number) => !Number.isInteger(number)))).toBe(true);
  }, 240_000);

  it('enforces a string pattern, with the characters a JSON string must escape written as escapes', async () => {
    const values = await validAnswers({
      type: 'object',
      properties: { code: { type: 'string', pattern: '^[A-Z]{2}-[0-9]{3}$' }, quoted: { type: 'string', pattern: '^["\\\\a]{1,4}x.$' } },
      required: ['code', 'quoted'],
      additionalProperties: false,
    });
    for (const value of values) expect((value as { code: string }).code).toMatch(/^[A-Z]{2}-[0-9]{3}$/);
  }, 240_000);

  it.each([
    { type: 'integer', minimum: -50, maximum: 1_000_000 },
    { type: 'number', exclusiveMinimum: 0, maximum: 1 },
    { type: 'string', pattern: '^[a-f0-9]{8}$' },
  ])('enforces a bounded value at the root of the schema ($type)', async (schema) => {
    await validAnswers(schema);
  }, 240_000);

  it.each([
    { keyword: 'minimum', schema: { type: 'number', minimum: 0.5, maximum: 2 } },
    { keyword: 'exclusiveMaximum', schema: { type: 'number', exclusiveMaximum: 1e300 } },
    { keyword: 'minimum', schema: { type: 'integer', minimum: 10, maximum: 2 } },
    { keyword: 'multipleOf', schema: { type: 'number', multipleOf: 0.5 } },
    { keyword: 'pattern', schema: { type: 'string', pattern: '^(?=a)a+$' } },
    { keyword: 'pattern', schema: { type: 'string', pattern: '^a+$', minLength: 2 } },
  ])('refuses $keyword where a grammar cannot express it, naming the keyword ($schema)', async ({ keyword, schema }) => {
    const error = await collect(engine.generate(guided({ type: 'object', properties: { n: schema }, required: ['n'] }, 1))).then(() => null, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).reason).toBe('unsupported_parameter');
    expect((error as EngineError).message).toContain(`"${keyword}"`);
  });
});
