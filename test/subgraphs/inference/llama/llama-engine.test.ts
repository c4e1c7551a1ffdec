import { Ajv } from 'ajv';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError, type GenerationInput, type GenerationRequest, type SamplingParams } from '../../../../subgraphs/inference/engine/text-engine.js';
import { writeRandomGguf } from '../../../../subgraphs/inference/engines/llama/gguf-writer.js';
import { LlamaEngine } from '../../../../subgraphs/inference/engines/llama/llama-engine.js';
import { collect } from './collect.js';

let dir: string;
let engine: LlamaEngine;

const CHAT: GenerationInput = { kind: 'chat', messages: [{ role: 'system', content: 'Answer briefly.' }, { role: 'user', content: 'hello world' }] };

function request(sampling: SamplingParams, extra: Partial<GenerationRequest> = {}): GenerationRequest {
  return { model: 'good', input: CHAT, sampling, signal: new AbortController().signal, ...extra };
}

async function refusal(promise: Promise<unknown>): Promise<EngineError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(EngineError);
  return error as EngineError;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'llama-engine-'));
  await writeRandomGguf(join(dir, 'good.gguf'), { seed: 11 });
  // head_count 0: llama.cpp's loader fails a GGML_ASSERT and aborts the process that loads it.
  await writeRandomGguf(join(dir, 'malformed.gguf'), { seed: 12, headCount: 0 });
  engine = new LlamaEngine({ modelsDir: dir, sequences: 2, threads: 1, contextSize: 512, maxWaiting: 1, rescanMs: 0 });
  await engine.settled();
}, 120_000);

afterAll(async () => {
  await engine?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the llama engine over a models folder', () => {
  it('lists every GGUF as a model: the good one ready, the malformed one failed with the reason, and this process alive', async () => {
    const models = await engine.models();
    expect(models.map((model) => [model.id, model.status])).toEqual([
      ['good', 'ready'],
      ['malformed', 'failed'],
    ]);
    expect(models[0]).toMatchObject({ contextLength: 512, inputModalities: ['text'], urlImageInput: false });
    expect(models[1].error).toMatch(/GGML_ASSERT|exited/);
    expect(process.exitCode ?? 0).toBe(0);
    const answer = await collect(engine.generate(request({ maxTokens: 8, seed: 1 })));
    expect(answer.usage.completionTokens).toBeGreaterThan(0);
  });

  it('refuses the failed model as unavailable, an unknown one as not found', async () => {
    const failed = await refusal(collect(engine.generate(request({ maxTokens: 4 }, { model: 'malformed' }))));
    expect(failed.reason).toBe('unavailable');
    const missing = await refusal(collect(engine.generate(request({ maxTokens: 4 }, { model: 'nowhere' }))));
    expect(missing.reason).toBe('model_not_found');
  });

  it('finds a file dropped into the folder on the next models() call', async () => {
    // This one has no chat template: completions only.
    await writeRandomGguf(join(dir, 'later.gguf'), { seed: 13, chatTemplate: null });
    expect((await engine.models()).map((model) => model.id)).toEqual(['good', 'later', 'malformed']);
    const settled = await engine.settled();
    expect(settled.find((model) => model.id === 'later')?.status).toBe('ready');
    const answer = await collect(engine.generate(request({ maxTokens: 3, seed: 2 }, { model: 'later', input: { kind: 'completion', prompt: 'hello' } })));
    expect(answer.usage.completionTokens).toBeGreaterThan(0);
    const chat = await refusal(collect(engine.generate(request({ maxTokens: 3 }, { model: 'later' }))));
    expect([chat.reason, chat.param]).toEqual(['invalid_request', 'messages']);
    expect(chat.message).toMatch(/no chat template/);
  }, 60_000);
});

describe('generation', () => {
  it('stops at max_tokens with finish_reason length and counts the prompt exactly as tokenize does', async () => {
    const answer = await collect(engine.generate(request({ maxTokens: 12, seed: 3, temperature: 1 })));
    const tokens = await engine.tokenize('good', CHAT);
    expect(answer.usage.promptTokens).toBe(tokens.count);
    // A random model may end early with its end-of-generation token; then it is 'stop'.
    if (answer.finishReason === 'length') expect(answer.usage.completionTokens).toBe(12);
    else expect(answer.usage.completionTokens).toBeLessThan(12);
    expect(answer.deltas).toBeGreaterThan(0);
  });

  it('with max_tokens and no end token in reach, finishes with length after exactly max_tokens', async () => {
    // The regex admits no end before 200 characters, so the model cannot stop before max_tokens.
    const answer = await collect(engine.generate(request({ maxTokens: 10, seed: 4 }, { guided: { kind: 'regex', pattern: '[a-z]{200,300}' } })));
    expect(answer.finishReason).toBe('length');
    expect(answer.usage.completionTokens).toBe(10);
  });

  it('gives the same text for the same seed and another text for another seed', async () => {
    const sampling = { maxTokens: 24, temperature: 1.2 };
    const first = await collect(engine.generate(request({ ...sampling, seed: 42 })));
    const again = await collect(engine.generate(request({ ...sampling, seed: 42 })));
    expect(again.text).toBe(first.text);
    const others = await Promise.all([7, 8, 9].map((seed) => collect(engine.generate(request({ ...sampling, seed })))));
    expect(others.some((other) => other.text !== first.text)).toBe(true);
  });

  it('ends at a stop sequence with finish_reason stop, leaving the stop string out', async () => {
    const prompt: GenerationInput = { kind: 'completion', prompt: 'the pipeline check' };
    const free = await collect(engine.generate(request({ maxTokens: 40, seed: 5, temperature: 0.9 }, { input: prompt })));
    expect(free.text.length).toBeGreaterThan(6);
    const stop = free.text.slice(4, 6);
    const stopped = await collect(engine.generate(request({ maxTokens: 40, seed: 5, temperature: 0.9, stop: [stop] }, { input: prompt })));
    expect(stopped.finishReason).toBe('stop');
    expect(stopped.text).toBe(free.text.slice(0, free.text.indexOf(stop)));
  });

  it('no_repeat_ngram_size bans every token that would repeat an n-gram of the prompt or the answer', async () => {
    const input: GenerationInput = { kind: 'completion', prompt: 'red green blue red green' };
    const prompt = (await engine.tokenize('good', input)).tokens;
    const repeatedBigrams = (ids: number[]) => {
      const all = [...prompt, ...ids];
      const seen = new Set<string>();
      let repeats = 0;
      for (let i = 0; i + 2 <= all.length; i++) {
        const key = `${all[i]},${all[i + 1]}`;
        if (seen.has(key) && i + 1 >= prompt.length) repeats++;
        seen.add(key);
      }
      return repeats;
    };
    // Greedy decoding of random weights falls into a loop: the same bigrams again and again.
    const free = await collect(engine.generate(request({ maxTokens: 60, temperature: 0 }, { input })));
    const freeIds = free.extensions!.completionTokenIds as number[];
    expect(freeIds).toHaveLength(free.usage.completionTokens);
    expect(repeatedBigrams(freeIds)).toBeGreaterThan(0);
    const banned = await collect(engine.generate(request({ maxTokens: 60, temperature: 0, noRepeatNgramSize: 2 }, { input })));
    expect(repeatedBigrams(banned.extensions!.completionTokenIds as number[])).toBe(0);
  });

  it('passes the penalties and DRY to the sampler: each changes the seeded answer', async () => {
    const input: GenerationInput = { kind: 'completion', prompt: 'red green blue red green' };
    // The grammar only keeps the model from ending early, so every run is 40 tokens long.
    const seeded = { maxTokens: 40, temperature: 0.7, seed: 3 };
    const guided = { kind: 'regex', pattern: '[a-z]{300}' } as const;
    const ids = async (sampling: SamplingParams) => (await collect(engine.generate(request(sampling, { input, guided })))).extensions!.completionTokenIds;
    const baseline = await ids(seeded);
    expect(await ids(seeded)).toEqual(baseline);
    for (const extra of [{ repetitionPenalty: 1.5 }, { presencePenalty: 1.5 }, { frequencyPenalty: 1.5 }, { dryMultiplier: 0.8, dryBase: 1.75, dryAllowedLength: 1 }]) {
      expect(await ids({ ...seeded, ...extra }), JSON.stringify(extra)).not.toEqual(baseline);
    }
  });

  it('refuses the parameters it has no sampler for, naming them', async () => {
    for (const [sampling, param] of [
      [{ typicalP: 0.5 }, 'typical_p'],
      [{ tfs: 0.9 }, 'tfs'],
      [{ topA: 0.2 }, 'top_a'],
      [{ mirostat: 2 }, 'mirostat'],
    ] as const) {
      const error = await refusal(collect(engine.generate(request(sampling))));
      expect([error.reason, error.param]).toEqual(['unsupported_parameter', param]);
    }
    expect([...engine.unsupported].sort()).toEqual(['mirostat', 'tfs', 'topA', 'typicalP']);
  });

  it('refuses a prompt and max_tokens beyond the context', async () => {
    const error = await refusal(collect(engine.generate(request({ maxTokens: 600 }))));
    expect([error.reason, error.param]).toEqual(['invalid_request', 'max_tokens']);
  });

  it('says it accepted a request before its first token, and never for one it refuses', async () => {
    const seen: string[] = [];
    for await (const event of engine.generate(request({ maxTokens: 3, seed: 3 }, { onAccepted: () => seen.push('accepted') }))) seen.push(event.type);
    expect(seen[0]).toBe('accepted');
    expect(seen.filter((entry) => entry === 'accepted')).toHaveLength(1);
    expect(seen.at(-1)).toBe('done');
    let accepted = false;
    await refusal(collect(engine.generate(request({ maxTokens: 600 }, { onAccepted: () => (accepted = true) }))));
    expect(accepted).toBe(false);
  });
});

describe('guided output', () => {
  it('guided_json: the output parses as JSON matching the schema', async () => {
    const schema = {
      type: 'object',
      properties: { ok: { type: 'boolean' }, color: { enum: ['red', 'green', 'blue'] }, count: { type: 'integer' } },
      required: ['ok', 'color', 'count'],
      additionalProperties: false,
    };
    const validate = new Ajv().compile(schema);
    for (const seed of [1, 2]) {
      const answer = await collect(engine.generate(request({ maxTokens: 120, seed }, { guided: { kind: 'json', schema } })));
      expect(answer.finishReason).toBe('stop');
      const parsed: unknown = JSON.parse(answer.text);
      expect(validate(parsed), JSON.stringify(validate.errors)).toBe(true);
    }
  });

  it('guided_choice: the output is one of the choices', async () => {
    const choices = ['alpha', 'beta gamma', 'delta "quoted"'];
    const outputs = new Set<string>();
    for (const seed of [1, 2, 3, 4]) {
      const answer = await collect(engine.generate(request({ maxTokens: 30, seed }, { guided: { kind: 'choice', choices } })));
      expect(choices).toContain(answer.text);
      outputs.add(answer.text);
    }
  });

  it('guided_regex: the output matches the pattern', async () => {
    const pattern = '(ab|c[d-f]+)x?\\d{2,3}(\\.[0-9]{1,2})?';
    for (const seed of [1, 2, 3]) {
      const answer = await collect(engine.generate(request({ maxTokens: 30, seed }, { guided: { kind: 'regex', pattern } })));
      expect(answer.finishReason).toBe('stop');
      expect(answer.text).toMatch(new RegExp(`^(?:${pattern})$`));
    }
  });

  it.each([
    '\\d{3}-\\d{2,4}',
    '[^a-z\\n]{3,5}',
    '(cat|dog)s?!',
    'a.b.c',
    '\\w{1,6}@\\w{1,6}\\.(com|org)',
    '[A-F0-9]{4}',
    'x{0,3}y{1,4}z?',
    '\\s[\\[\\]]\\(\\)\\.',
  ])('guided_regex %s: every feature of the subset holds in what the model writes', async (pattern) => {
    const answer = await collect(engine.generate(request({ maxTokens: 40, seed: 7 }, { guided: { kind: 'regex', pattern } })));
    expect(answer.finishReason).toBe('stop');
    // By code points, as the grammar counts: a character beyond U+FFFF is one, not two UTF-16 units.
    expect(answer.text).toMatch(new RegExp(`^(?:${pattern})$`, 'u'));
  });

  it('guided_regex outside the subset is refused naming guided_regex', async () => {
    const error = await refusal(collect(engine.generate(request({ maxTokens: 4 }, { guided: { kind: 'regex', pattern: '(?=a)b' } }))));
    expect([error.reason, error.param]).toEqual(['invalid_request', 'guided_regex']);
    // Within the subset, but llama.cpp refuses the grammar its nested optional repetitions expand to.
    const tooLarge = await refusal(collect(engine.generate(request({ maxTokens: 4 }, { guided: { kind: 'regex', pattern: '([a-z]{1,1000}){3}' } }))));
    expect([tooLarge.reason, tooLarge.param]).toEqual(['invalid_request', 'guided_regex']);
  });
});

describe('tokenize', () => {
  it('applies the chat template for chat and not for a prompt, with the context as maxModelLen', async () => {
    const chat = await engine.tokenize('good', { kind: 'chat', messages: [{ role: 'user', content: 'hello' }] });
    const prompt = await engine.tokenize('good', { kind: 'completion', prompt: 'hello' });
    expect(chat.maxModelLen).toBe(512);
    expect(chat.count).toBe(chat.tokens.length);
    // <s> hello vs <s> <|im_start|> user \n hello <|im_end|> \n <|im_start|> assistant \n
    expect(prompt.count).toBe(prompt.tokens.length);
    expect(chat.count).toBeGreaterThan(prompt.count + 6);
    expect(chat.tokens[0]).toBe(prompt.tokens[0]);
  });
});

describe('capacity', () => {
  it('runs as many generations as sequences at once; one more waits for a free sequence, one beyond maxWaiting is refused', async () => {
    const generation = (seed: number, signal = new AbortController().signal) => engine.generate(request({ maxTokens: 150, seed }, { signal, guided: { kind: 'regex', pattern: '[a-z]{1000}' } }));
    const long = (seed: number, signal?: AbortSignal) => collect(generation(seed, signal));
    // Two generations held after their first delta: a sequence is given back only when its answer is
    // read to its end, so both stay busy however soon the model (some 0.1 s for both) is done.
    const held = await Promise.all(
      [1, 2].map(async (seed) => {
        const events = generation(seed)[Symbol.asyncIterator]();
        expect((await events.next()).value).toMatchObject({ type: 'delta' });
        return events;
      }),
    );
    const queued = new AbortController();
    const third = long(3, queued.signal);
    // Refused once the third waits (requests queue in arrival order).
    const refused = await refusal(long(4));
    expect((await engine.capacity()).find((entry) => entry.model === 'good')).toMatchObject({ sequences: 2, busy: 2, waiting: 1 });
    expect(refused.reason).toBe('unavailable');
    expect(refused.message).toMatch(/busy/);
    // A waiting request whose client goes away leaves the queue.
    queued.abort(new Error('left the queue'));
    await expect(third).rejects.toThrow('left the queue');
    expect((await engine.capacity()).find((entry) => entry.model === 'good')).toMatchObject({ busy: 2, waiting: 0 });
    const late = long(5);
    const answers = await Promise.all([...held.map((events) => collect({ [Symbol.asyncIterator]: () => events })), late]);
    expect(answers.map((answer) => answer.usage.completionTokens)).toEqual([150, 150, 150]);
    expect((await engine.capacity()).find((entry) => entry.model === 'good')).toMatchObject({ busy: 0, waiting: 0 });
  });

  it('an abort stops the generation at once and frees its sequence', async () => {
    const controller = new AbortController();
    const events = engine.generate(request({ maxTokens: 400, seed: 9 }, { signal: controller.signal, guided: { kind: 'regex', pattern: '[a-z]{500}' } }));
    let deltas = 0;
    const caught = await (async () => {
      try {
        for await (const event of events) {
          if (event.type === 'delta' && ++deltas === 2) controller.abort(new Error('client went away'));
        }
      } catch (error) {
        return error;
      }
      return null;
    })();
    expect((caught as Error).message).toBe('client went away');
    expect(deltas).toBeLessThan(10);
    expect((await engine.capacity()).find((entry) => entry.model === 'good')).toMatchObject({ busy: 0, waiting: 0 });
    const next = await collect(engine.generate(request({ maxTokens: 5, seed: 1 }, { guided: { kind: 'regex', pattern: '[a-z]{5}' } })));
    expect(next.text).toMatch(/^[a-z]{5}$/);
  });
});
