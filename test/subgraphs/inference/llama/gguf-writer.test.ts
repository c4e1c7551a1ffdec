import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readGgufFileInfo } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHATML_TEMPLATE, ensurePipelineCheckGguf, randomGgufBytes, writeRandomGguf } from '../../../../subgraphs/inference/engines/llama/gguf-writer.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gguf-writer-'));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the random-weight GGUF writer', () => {
  it('writes a GGUF v3 llama file that node-llama-cpp reads back: hyperparameters, unique tokens, the chat template', async () => {
    const path = join(dir, 'check.gguf');
    await writeRandomGguf(path, { seed: 3, contextLength: 1024 });
    const info = await readGgufFileInfo(path, { sourceType: 'filesystem', logWarnings: false });
    expect(info.version).toBe(3);
    const metadata = info.metadata as unknown as Record<string, Record<string, unknown>>;
    expect(metadata.general.architecture).toBe('llama');
    expect(metadata.llama).toMatchObject({ context_length: 1024, embedding_length: 64, block_count: 2, feed_forward_length: 128 });
    const tokenizer = metadata.tokenizer as { chat_template: string; ggml: { model: string; tokens: string[]; token_type: number[] } };
    expect(tokenizer.chat_template).toBe(CHATML_TEMPLATE);
    expect(tokenizer.ggml.model).toBe('llama');
    expect(new Set(tokenizer.ggml.tokens).size).toBe(tokenizer.ggml.tokens.length);
    // Every byte has its fallback piece, as llama.cpp's SentencePiece tokenizer requires.
    for (let byte = 0; byte < 256; byte++) expect(tokenizer.ggml.tokens).toContain(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`);
    expect(info.tensorInfo?.map((tensor) => tensor.name)).toContain('blk.1.ffn_down.weight');
    expect((await stat(path)).size).toBeLessThan(2_000_000);
  });

  it('writes the same bytes for the same seed and other weights for another seed', async () => {
    expect(randomGgufBytes({ seed: 5 }).equals(randomGgufBytes({ seed: 5 }))).toBe(true);
    expect(randomGgufBytes({ seed: 5 }).equals(randomGgufBytes({ seed: 6 }))).toBe(false);
    const path = join(dir, 'same.gguf');
    await writeRandomGguf(path, { seed: 5 });
    expect((await readFile(path)).equals(randomGgufBytes({ seed: 5 }))).toBe(true);
  });

  it('leaves the chat template out when asked (a model only for completions)', async () => {
    const path = join(dir, 'plain.gguf');
    await writeRandomGguf(path, { chatTemplate: null });
    const info = await readGgufFileInfo(path, { sourceType: 'filesystem', logWarnings: false });
    expect((info.metadata as unknown as { tokenizer: Record<string, unknown> }).tokenizer.chat_template).toBeUndefined();
  });

  it('writes the pipeline-check model into a models folder once and leaves an existing file alone', async () => {
    const models = join(dir, 'models');
    const path = await ensurePipelineCheckGguf(models);
    expect(path).toBe(join(models, 'pipeline-check.gguf'));
    const info = await readGgufFileInfo(path, { sourceType: 'filesystem', logWarnings: false });
    expect((info.metadata as unknown as { general: { name: string } }).general.name).toBe('pipeline-check');
    await writeFile(path, 'replaced by an operator');
    await ensurePipelineCheckGguf(models);
    expect(await readFile(path, 'utf8')).toBe('replaced by an operator');
  });
});
