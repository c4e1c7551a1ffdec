import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeRandomGguf, type RandomGgufOptions } from '../../../../subgraphs/inference/engines/llama/gguf-writer.js';
import { LlamaEngine } from '../../../../subgraphs/inference/engines/llama/llama-engine.js';

export interface RandomModelEngine {
  engine: LlamaEngine;
  /** The models folder, for a test that loads a model itself. */
  dir: string;
  close(): Promise<void>;
}

/**
 * A llama engine (one sequence, one thread) over random-weight GGUFs written to a temporary folder,
 * one per `models` entry (file name → writer options), every model loaded before it returns.
 */
export async function startRandomModelEngine(name: string, models: Record<string, RandomGgufOptions>, contextSize = 512): Promise<RandomModelEngine> {
  const dir = await mkdtemp(join(tmpdir(), `${name}-`));
  const close = async () => {
    await engine?.close();
    await rm(dir, { recursive: true, force: true });
  };
  let engine: LlamaEngine | undefined;
  try {
    for (const [file, options] of Object.entries(models)) await writeRandomGguf(join(dir, file), options);
    engine = new LlamaEngine({ modelsDir: dir, sequences: 1, threads: 1, contextSize, maxWaiting: 4, rescanMs: 0 });
    await engine.settled();
    return { engine, dir, close };
  } catch (error) {
    await close();
    throw error;
  }
}
