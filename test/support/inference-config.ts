import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InferenceConfig } from '../../subgraphs/inference/config/inference-config.js';
import { inferenceConfigFrom } from '../../subgraphs/inference/config/load-inference-config.js';
import { writeRandomGguf } from '../../subgraphs/inference/engines/llama/gguf-writer.js';

const SPEC_PROVIDERS = ['provider_a', 'provider_b', 'provider_c', 'provider_d'] as const;

/** provider_a is named Provider A, as in the built-in defaults. */
const nameOf = (id: string) => `Provider ${id.slice(-1).toUpperCase()}`;

/**
 * The inference configuration of platform tests that do not generate: the four providers on the
 * OCR engine alone, which starts its worker on first use, so a test platform spawns no llama.cpp
 * process. Inference tests build their own with `llamaInferenceConfig`.
 */
export function ocrOnlyInferenceConfig(): InferenceConfig {
  return inferenceConfigFrom(
    {
      providers: SPEC_PROVIDERS.map((id) => ({ id, name: nameOf(id), engines: [{ type: 'ocr' }], ...(id === 'provider_b' ? { maxConcurrency: 3 } : {}) })),
    },
    null,
  );
}

/**
 * A models folder with one random-weight GGUF (`tiny`, llama architecture, ChatML template) and a
 * configuration whose four providers serve it with the embedded llama.cpp and the OCR model.
 * `overrides` replaces top-level keys (interfaces, plans, providers) as a configuration file would.
 */
export async function llamaInferenceConfig(overrides: Record<string, unknown> = {}, llama: { sequences?: number; contextSize?: number } = {}): Promise<{ config: InferenceConfig; modelsDir: string }> {
  const modelsDir = await mkdtemp(join(tmpdir(), 'inference-models-'));
  await writeRandomGguf(join(modelsDir, 'tiny.gguf'), { seed: 7 });
  const engines = [{ type: 'llama', sequences: llama.sequences ?? 6, contextSize: llama.contextSize ?? 512, threads: 1 }, { type: 'ocr' }];
  const config = inferenceConfigFrom(
    {
      modelsDir,
      providers: SPEC_PROVIDERS.map((id) => ({ id, name: nameOf(id), engines, ...(id === 'provider_b' ? { maxConcurrency: 3 } : {}) })),
      ...overrides,
    },
    null,
  );
  return { config, modelsDir };
}

/**
 * Waits until the gateway lists every llama model as ready (a model loads in its own process after
 * the platform starts; until then requests for it are 503 model_loading, as the spec says).
 */
export async function modelsReady(baseUrl: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await fetch(`${baseUrl}/inference/gateway/v1/models`);
    const body = (await response.json()) as { data?: { id: string; status: string }[] };
    if (response.ok && body.data?.length && body.data.every((model) => model.status !== 'loading')) return;
    if (Date.now() > deadline) throw new Error(`models still loading after ${timeoutMs} ms: ${JSON.stringify(body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
