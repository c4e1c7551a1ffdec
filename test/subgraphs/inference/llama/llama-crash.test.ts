import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError, type GenerationRequest } from '../../../../subgraphs/inference/engine/text-engine.js';
import { writeRandomGguf } from '../../../../subgraphs/inference/engines/llama/gguf-writer.js';
import { LlamaEngine } from '../../../../subgraphs/inference/engines/llama/llama-engine.js';
import { collect } from './collect.js';

let dir: string;
let engine: LlamaEngine;

function request(model: string): GenerationRequest {
  return { model, input: { kind: 'completion', prompt: 'hello world' }, sampling: { maxTokens: 6, seed: 1 }, signal: new AbortController().signal };
}

async function refusal(promise: Promise<unknown>): Promise<EngineError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(EngineError);
  return error as EngineError;
}

async function status(id: string) {
  return (await engine.models()).find((model) => model.id === id)!;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'llama-crash-'));
  await writeRandomGguf(join(dir, 'good.gguf'), { seed: 21 });
  // A head of one dimension loads, but llama.cpp's rope asserts an even size at the first token:
  // a model that aborts its process while serving, not while loading.
  await writeRandomGguf(join(dir, 'crashy.gguf'), { seed: 22, embeddingLength: 6, headCount: 4, headCountKv: 4 });
  engine = new LlamaEngine({ modelsDir: dir, sequences: 2, threads: 1, contextSize: 256 });
  await engine.settled();
}, 120_000);

afterAll(async () => {
  await engine?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a model whose worker crashes while serving', () => {
  it('answers unavailable, restarts its worker (model_loading meanwhile), and the other model and this process carry on', async () => {
    expect(await status('crashy')).toMatchObject({ status: 'ready' });
    const [crashed, good] = await Promise.allSettled([collect(engine.generate(request('crashy'))), collect(engine.generate(request('good')))]);
    expect(crashed.status).toBe('rejected');
    const error = (crashed as PromiseRejectedResult).reason as EngineError;
    expect(error).toBeInstanceOf(EngineError);
    expect(error.reason).toBe('unavailable');
    expect(error.message).toMatch(/GGML_ASSERT/);
    expect(good.status).toBe('fulfilled');

    const restarting = await status('crashy');
    expect(restarting.status).toBe('loading');
    expect(restarting.error).toMatch(/SIGABRT/);
    expect((await refusal(collect(engine.generate(request('crashy'))))).reason).toBe('model_loading');

    await engine.settled();
    expect(await status('crashy')).toMatchObject({ status: 'ready' });
  }, 60_000);

  it('is failed for good after three crashes within ten minutes, with the reason listed', async () => {
    for (let crash = 2; crash <= 3; crash++) {
      await engine.settled();
      expect((await refusal(collect(engine.generate(request('crashy'))))).reason).toBe('unavailable');
    }
    await engine.settled();
    const failed = await status('crashy');
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/3 crashes/);
    expect((await refusal(collect(engine.generate(request('crashy'))))).reason).toBe('unavailable');
    expect(await status('good')).toMatchObject({ status: 'ready' });
    const answer = await collect(engine.generate(request('good')));
    expect(answer.usage.promptTokens).toBeGreaterThan(0);
  }, 90_000);
});
