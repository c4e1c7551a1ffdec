import { Ajv } from 'ajv';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError, type GenerationInput, type GenerationRequest } from '../../../../subgraphs/inference/engine/text-engine.js';
import { writeRandomGguf } from '../../../../subgraphs/inference/engines/llama/gguf-writer.js';
import { LlamaEngine } from '../../../../subgraphs/inference/engines/llama/llama-engine.js';
import { collect } from './collect.js';

let dir: string;
let engine: LlamaEngine;

const CHAT: GenerationInput = { kind: 'chat', messages: [{ role: 'user', content: 'Write a short note' }] };
const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];

function guided(schema: Record<string, unknown>, seed: number): GenerationRequest {
  return {
    model: 'good',
    input: CHAT,
    sampling: { maxTokens: 120, seed, temperature: 1 },
    guided: { kind: 'json', schema },
    signal: new AbortController().signal,
  };
}

/** Every answer over several seeds, parsed, with the seed beside it for a failure's message. */
async function answers(schema: Record<string, unknown>): Promise<{ seed: number; text: string; value: unknown }[]> {
  const out = [];
  for (const seed of SEEDS) {
    const { text, finishReason } = await collect(engine.generate(guided(schema, seed)));
    expect(finishReason, `seed ${seed}: ${text}`).toBe('stop');
    out.push({ seed, text, value: JSON.parse(text) as unknown });
  }
  return out;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'llama-guided-json-'));
  await writeRandomGguf(join(dir, 'good.gguf'), { seed: 11 });
  engine = new LlamaEngine({ modelsDir: dir, sequences: 1, threads: 1, contextSize: 512, maxWaiting: 4, rescanMs: 0 });
  await engine.settled();
}, 120_000);

afterAll(async () => {
  await engine?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('guided_json on the llama engine', () => {
  it('keeps a string to its minLength/maxLength in characters of valid UTF-8, whatever the seed (no broken bytes, no dropped control tokens)', async () => {
    const schema = { type: 'object', properties: { note: { type: 'string', minLength: 10, maxLength: 10 } }, required: ['note'], additionalProperties: false };
    for (const { seed, text, value } of await answers(schema)) {
      const note = (value as { note: string }).note;
      expect(note, `seed ${seed}: ${text}`).not.toContain('\uFFFD');
      expect([...note].length, `seed ${seed}: ${text}`).toBe(10);
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

  it('refuses a range too wide to enforce, naming the keyword', async () => {
    const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 0, maximum: 10_000_000 } }, required: ['n'] };
    const error = await collect(engine.generate(guided(schema, 1))).then(() => null, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).message).toMatch(/"minimum" \(at \/properties\/n\)/);
  });
});

