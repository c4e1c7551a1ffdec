import { join } from 'node:path';
import { getLlama, type Token } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GenerationEvent, GenerationRequest, SamplingParams, TokenLogprob } from '../../../../subgraphs/inference/engine/text-engine.js';
import type { LlamaEngine } from '../../../../subgraphs/inference/engines/llama/llama-engine.js';
import { startRandomModelEngine, type RandomModelEngine } from './random-model-engine.js';

let dir: string;
let engine: LlamaEngine;
let fixture: RandomModelEngine | undefined;

function request(sampling: SamplingParams, logprobs?: { top: number }): GenerationRequest {
  return { model: 'good', input: { kind: 'chat', messages: [{ role: 'user', content: 'Say something' }] }, sampling, ...(logprobs ? { logprobs } : {}), signal: new AbortController().signal };
}

interface Read {
  text: string;
  deltas: { text: string; logprobs?: TokenLogprob[] }[];
  tokens: TokenLogprob[];
  finishReason?: string;
  completionTokens: number;
}

async function read(events: AsyncIterable<GenerationEvent>): Promise<Read> {
  const out: Read = { text: '', deltas: [], tokens: [], completionTokens: 0 };
  for await (const event of events) {
    if (event.type === 'delta') {
      out.text += event.text;
      out.deltas.push({ text: event.text, logprobs: event.logprobs });
      out.tokens.push(...(event.logprobs ?? []));
    } else if (event.type === 'done') {
      out.finishReason = event.finishReason;
      out.completionTokens = event.usage.completionTokens;
    }
  }
  return out;
}

beforeAll(async () => {
  fixture = await startRandomModelEngine('llama-logprobs', { 'good.gguf': { seed: 5 } });
  ({ engine, dir } = fixture);
}, 120_000);

afterAll(async () => {
  await fixture?.close();
});

describe('logprobs on the llama engine', () => {
  it('gives every delta the log probabilities of its tokens, whose bytes make up the text', async () => {
    for (const seed of [1, 2, 3]) {
      const answer = await read(engine.generate(request({ maxTokens: 24, seed, temperature: 1 }, { top: 3 })));
      const context = `seed ${seed}: ${JSON.stringify(answer.deltas)}`;
      // One entry per sampled token; an end-of-generation token is sampled but not the answer's.
      expect(answer.tokens.length, context).toBe(answer.completionTokens - (answer.finishReason === 'stop' ? 1 : 0));
      expect(Buffer.from(answer.tokens.flatMap((token) => token.bytes!)).toString('utf8'), context).toBe(answer.text);
      for (const delta of answer.deltas) expect(delta.logprobs, context).toBeDefined();
      for (const token of answer.tokens) {
        expect(token.logprob, context).toBeLessThanOrEqual(0);
        expect(token.top.length, context).toBeLessThanOrEqual(3);
        expect(token.top.length, context).toBeGreaterThan(0);
        const figures = token.top.map((alt) => alt.logprob);
        expect(figures, context).toEqual([...figures].sort((a, b) => b - a));
        for (const alt of token.top) expect(alt.logprob, context).toBeLessThanOrEqual(0);
        // The sampled token among the alternatives has the same figure there.
        const same = token.top.find((alt) => alt.token === token.token && JSON.stringify(alt.bytes) === JSON.stringify(token.bytes));
        if (same) expect(same.logprob, context).toBeCloseTo(token.logprob, 10);
        // It cannot be likelier than the likeliest.
        expect(token.logprob, context).toBeLessThanOrEqual(token.top[0]!.logprob + 1e-9);
      }
    }
  }, 120_000);

  it('samples the same answer with and without logprobs, and with top 0 gives no alternatives', async () => {
    const sampling = { maxTokens: 24, seed: 7, temperature: 1 };
    const plain = await read(engine.generate(request(sampling)));
    const withLogprobs = await read(engine.generate(request(sampling, { top: 0 })));
    expect(withLogprobs.text).toBe(plain.text);
    expect(plain.tokens).toEqual([]);
    expect(withLogprobs.tokens.every((token) => token.top.length === 0)).toBe(true);
  }, 120_000);

  it('with temperature 0 samples the likeliest token every time', async () => {
    const answer = await read(engine.generate(request({ maxTokens: 16, seed: 1, temperature: 0 }, { top: 2 })));
    expect(answer.tokens.length).toBeGreaterThan(0);
    for (const token of answer.tokens) {
      expect(token.top[0]).toMatchObject({ token: token.token, bytes: token.bytes });
      expect(token.logprob).toBeCloseTo(token.top[0]!.logprob, 10);
    }
  }, 120_000);

  it("matches node-llama-cpp's own probabilities read in this process for the same prompt and settings", async () => {
    const answer = await read(engine.generate({ model: 'good', input: { kind: 'completion', prompt: 'Once upon' }, sampling: { maxTokens: 6, seed: 1, temperature: 0 }, logprobs: { top: 3 }, signal: new AbortController().signal }));
    expect(answer.tokens.length).toBeGreaterThan(0);
    const llama = await getLlama({ gpu: false, build: 'never', skipDownload: true, usePrebuiltBinaries: true, progressLogs: false });
    const model = await llama.loadModel({ modelPath: join(dir, 'good.gguf') });
    const context = await model.createContext({ contextSize: 512, threads: 1 });
    try {
      let prompt = model.tokenize('Once upon', false);
      const bos = model.tokens.bos;
      if (model.tokens.shouldPrependBosToken && bos != null && prompt[0] !== bos) prompt = [bos, ...prompt];
      const readings: { token: Token; probabilities: Map<Token, number> }[] = [];
      const options = { temperature: 0, topP: 1, topK: 0, minP: 0, seed: 1, yieldEogToken: true };
      for await (const step of context.getSequence().evaluateWithMetadata(prompt, { probabilities: true }, options)) {
        readings.push(step);
        if (readings.length === answer.tokens.length) break;
      }
      for (const [i, token] of answer.tokens.entries()) {
        const reading = readings[i]!;
        expect(token.logprob).toBeCloseTo(Math.log(reading.probabilities.get(reading.token)!), 6);
        const top = [...reading.probabilities].slice(0, 3);
        expect(token.top.map((alt) => alt.logprob)).toEqual(top.map(([, p]) => expect.closeTo(Math.log(p), 6)));
      }
    } finally {
      await context.dispose();
      await model.dispose();
    }
  }, 120_000);
});
