import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInferenceConfig } from '../../../../subgraphs/inference/config/load-inference-config.js';
import { EngineError } from '../../../../subgraphs/inference/engine/text-engine.js';
import { PIPELINE_CHECK_MODEL } from '../../../../subgraphs/inference/engines/llama/gguf-writer.js';
import { LlamaEngine } from '../../../../subgraphs/inference/engines/llama/llama-engine.js';
import { OCR_MODEL_ID, OcrEngine } from '../../../../subgraphs/inference/engines/ocr/ocr-engine.js';
import { ProviderRefusal } from '../../../../subgraphs/inference/provider-registry/provider-refusal.js';
import { ProviderRegistry, type ResolveRequest } from '../../../../subgraphs/inference/provider-registry/provider-registry.js';
import { collect } from '../llama/collect.js';
import { dataUri, encodePng, renderText } from '../ocr/text-image.js';

async function refusal(promise: Promise<unknown>): Promise<ProviderRefusal> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ProviderRefusal);
  return error as ProviderRefusal;
}

const signal = () => new AbortController().signal;

describe('the default configuration', () => {
  let dataDir: string;
  let registry: ProviderRegistry;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'provider-registry-'));
    registry = await ProviderRegistry.create(loadInferenceConfig({ DATA_DIR: dataDir }), { healthIntervalMs: 0 });
    const llama = registry.engines().find((engine) => engine instanceof LlamaEngine);
    await llama?.settled();
  }, 120_000);

  afterAll(async () => {
    await registry?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('writes the pipeline-check model into the default models folder on first start', async () => {
    await expect(access(join(dataDir, 'models', `${PIPELINE_CHECK_MODEL}.gguf`))).resolves.toBeUndefined();
  });

  it('shares one llama engine and one OCR engine among the four providers', () => {
    const engines = registry.engines();
    expect(engines).toHaveLength(2);
    expect(engines.filter((engine) => engine instanceof LlamaEngine)).toHaveLength(1);
    expect(engines.filter((engine) => engine instanceof OcrEngine)).toHaveLength(1);
  });

  it('lists both models on every provider and per interface the models of the providers it names', async () => {
    for (const provider of ['provider_a', 'provider_b', 'provider_c', 'provider_d']) {
      expect((await registry.modelsOf(provider)).map((model) => model.id)).toEqual([PIPELINE_CHECK_MODEL, OCR_MODEL_ID]);
    }
    const gateway = await registry.listModels({ interface: 'gateway' });
    expect(gateway.map((model) => `${model.provider}/${model.id}`)).toHaveLength(8);
    expect((await registry.listModels({ interface: 'serviceT' })).map((model) => model.provider)).toEqual(['provider_a', 'provider_a']);
    expect((await registry.listModels({ interface: 'proxy' })).map((model) => model.provider)).toEqual(['provider_d', 'provider_d']);
    expect(await registry.listModels({ interface: 'gateway', provider: 'provider_b' })).toHaveLength(2);
    // provider_d_image lists image models: there is no image engine yet.
    expect(await registry.listModels({ interface: 'gateway', provider: 'provider_d_image' })).toEqual([]);
    expect((await registry.modelsOnPlan('standard')).length).toBe(8);
  });

  it('resolves a model to every provider serving it, the least busy first, and generates through it', async () => {
    const resolution = await registry.resolve({ interface: 'gateway', model: PIPELINE_CHECK_MODEL, capability: 'chat' });
    expect(resolution.targets.map((target) => target.provider.id)).toEqual(['provider_a', 'provider_b', 'provider_c', 'provider_d']);
    const held = registry.acquire('provider_a', signal());
    try {
      const busier = await registry.resolve({ interface: 'gateway', model: PIPELINE_CHECK_MODEL });
      expect(busier.targets.map((target) => target.provider.id)).toEqual(['provider_b', 'provider_c', 'provider_d', 'provider_a']);
      const answer = await collect(registry.generate(busier.targets, { input: { kind: 'completion', prompt: 'hello' }, sampling: { maxTokens: 4, seed: 1 }, signal: signal() }));
      expect(answer.usage.completionTokens).toBeGreaterThan(0);
      // The generation's slot is back once its stream ended.
      expect(registry.inFlight('provider_b')).toBe(0);
    } finally {
      held.release();
    }
    const named = await registry.resolve({ interface: 'serviceT', provider: 'provider_a', model: PIPELINE_CHECK_MODEL });
    expect(named.targets.map((target) => [target.provider.id, target.engineModel])).toEqual([['provider_a', PIPELINE_CHECK_MODEL]]);
  });

  it('reads an image with the OCR engine through the provider serving vision', async () => {
    const resolution = await registry.resolve({ interface: 'proxy', model: OCR_MODEL_ID, capability: 'vision' });
    expect(resolution.targets.map((target) => target.provider.id)).toEqual(['provider_d']);
    const image = dataUri(encodePng(renderText(['SEVEN TAXIS'])));
    const answer = await collect(
      registry.generate(resolution.targets, {
        input: { kind: 'chat', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: image } }] }] },
        sampling: {},
        signal: signal(),
      }),
    );
    expect(answer.text).toContain('SEVEN TAXIS');
  }, 60_000);

  it.each<[string, ResolveRequest, string, string | undefined]>([
    ['an unknown provider', { interface: 'gateway', provider: 'provider_x', model: PIPELINE_CHECK_MODEL }, 'unknown_provider', 'provider'],
    ['provider_d_image, a listing filter only', { interface: 'gateway', provider: 'provider_d_image', model: PIPELINE_CHECK_MODEL }, 'unknown_provider', 'provider'],
    ['a provider the interface does not name', { interface: 'serviceT', provider: 'provider_b', model: PIPELINE_CHECK_MODEL }, 'unknown_provider', 'provider'],
    ['a model no provider serves', { interface: 'gateway', model: 'gpt-nowhere' }, 'model_not_found', 'model'],
    ['vision with a text-only model', { interface: 'gateway', model: PIPELINE_CHECK_MODEL, capability: 'vision' }, 'capability_not_served', 'model'],
    ['image generation, which needs an sd-webui engine', { interface: 'gateway', provider: 'provider_d', model: OCR_MODEL_ID, capability: 'txt2img' }, 'capability_not_served', 'provider'],
  ])('refuses %s', async (_, request, reason, param) => {
    const error = await refusal(registry.resolve(request));
    expect([error.reason, error.param]).toEqual([reason, param]);
  });

  it('reports every provider operational with its in-flight requests, limit and model count', async () => {
    const slot = registry.acquire('provider_b', signal());
    const reports = registry.status();
    slot.release();
    expect(reports.map((report) => [report.id, report.status, report.inFlight, report.maxConcurrency, report.models])).toEqual([
      ['provider_a', 'operational', 0, null, 2],
      ['provider_b', 'operational', 1, 3, 2],
      ['provider_c', 'operational', 0, null, 2],
      ['provider_d', 'operational', 0, null, 2],
    ]);
    expect(reports[0].engines.map((engine) => [engine.type, engine.ok])).toEqual([
      ['llama', true],
      ['ocr', true],
    ]);
  });

  it("refuses provider_b's fourth concurrent request at once, and an abort gives a slot back", async () => {
    const controllers = [new AbortController(), new AbortController(), new AbortController()];
    const slots = controllers.map((controller) => registry.acquire('provider_b', controller.signal));
    const busy = await refusal(Promise.resolve().then(() => registry.acquire('provider_b', signal())));
    expect(busy.reason).toBe('busy');
    controllers[1].abort();
    expect(registry.inFlight('provider_b')).toBe(2);
    const again = registry.acquire('provider_b', signal());
    for (const slot of [...slots, again]) slot.release();
    // Releasing twice (the aborted one) gives nothing extra back.
    expect(registry.inFlight('provider_b')).toBe(0);
    // Unlimited providers take as many as come.
    const many = Array.from({ length: 20 }, () => registry.acquire('provider_a', signal()));
    expect(registry.inFlight('provider_a')).toBe(20);
    for (const slot of many) slot.release();
  });
});

describe('a configuration file with plans, aliases, allow-lists and an sd-webui engine', () => {
  let dir: string;
  let registry: ProviderRegistry;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'provider-registry-file-'));
    const file = join(dir, 'inference.json');
    await writeFile(
      file,
      JSON.stringify({
        modelsDir: 'models',
        providers: [
          { id: 'provider_a', name: 'A', engines: [{ type: 'llama', threads: 1, contextSize: 256 }], aliases: { tiny: PIPELINE_CHECK_MODEL } },
          { id: 'provider_b', name: 'B', engines: [{ type: 'llama', threads: 1, contextSize: 256 }, { type: 'ocr' }], models: [OCR_MODEL_ID] },
          { id: 'provider_c', name: 'C', engines: [{ type: 'llama', modelsDir: 'other', threads: 1, contextSize: 256 }] },
          { id: 'provider_d', name: 'D', engines: [{ type: 'sd-webui', url: 'http://127.0.0.1:9/' }] },
        ],
        interfaces: {
          serviceT: { providers: ['provider_a'] },
          serviceI: { providers: ['provider_d'] },
          proxy: { providers: ['provider_d'] },
          gateway: { providers: ['provider_a', 'provider_b', 'provider_c', 'provider_d'] },
        },
        plans: [
          { id: 'basic', models: { provider_a: ['tiny'], provider_b: ['*'] } },
          { id: 'full', models: { provider_a: ['*'], provider_b: ['*'], provider_c: ['*'], provider_d: ['*'] } },
        ],
      }),
    );
    registry = await ProviderRegistry.create(loadInferenceConfig({ INFERENCE_CONFIG: file }), { healthIntervalMs: 0 });
  }, 120_000);

  afterAll(async () => {
    await registry?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('starts one engine per distinct entry and leaves a folder that is not the default alone', async () => {
    // provider_a's and provider_b's llama entries are identical; provider_c's names another folder.
    expect(registry.engines().map((engine) => engine.kind).sort()).toEqual(['llama', 'llama', 'ocr']);
    await expect(access(join(dir, 'models', `${PIPELINE_CHECK_MODEL}.gguf`))).resolves.toBeUndefined();
    await expect(access(join(dir, 'other', `${PIPELINE_CHECK_MODEL}.gguf`))).rejects.toThrow();
    expect(await registry.modelsOf('provider_c')).toEqual([]);
  });

  it('applies the allow-list and the aliases, and resolves an alias to the engine model id', async () => {
    expect((await registry.modelsOf('provider_a')).map((model) => [model.id, model.engineModel])).toEqual([
      [PIPELINE_CHECK_MODEL, PIPELINE_CHECK_MODEL],
      ['tiny', PIPELINE_CHECK_MODEL],
    ]);
    expect((await registry.modelsOf('provider_b')).map((model) => model.id)).toEqual([OCR_MODEL_ID]);
    const resolution = await registry.resolve({ interface: 'serviceT', model: 'tiny', plan: 'basic' });
    expect(resolution.targets.map((target) => [target.provider.id, target.engineModel])).toEqual([['provider_a', PIPELINE_CHECK_MODEL]]);
  });

  it('lists per plan and refuses a model off the key plan as not_on_plan', async () => {
    expect((await registry.modelsOnPlan('basic')).map((model) => `${model.provider}/${model.id}`)).toEqual(['provider_a/tiny', `provider_b/${OCR_MODEL_ID}`]);
    expect((await registry.listModels({ interface: 'gateway', plan: 'basic' })).map((model) => model.id)).toEqual(['tiny', OCR_MODEL_ID]);
    const error = await refusal(registry.resolve({ interface: 'serviceT', model: PIPELINE_CHECK_MODEL, plan: 'basic' }));
    expect([error.reason, error.param]).toEqual(['not_on_plan', 'model']);
    // Not found comes before the plan: a model nobody serves is 404 whatever the plan.
    expect((await refusal(registry.resolve({ interface: 'serviceT', model: 'ghost', plan: 'basic' }))).reason).toBe('model_not_found');
    expect((await registry.resolve({ interface: 'serviceT', model: PIPELINE_CHECK_MODEL, plan: 'full' })).targets).toHaveLength(1);
  });

  it('probes the sd-webui engine like any other: its unreachable upstream makes its provider down, the others operational', () => {
    const reports = Object.fromEntries(registry.status().map((report) => [report.id, report]));
    expect(reports.provider_d.status).toBe('down');
    expect(reports.provider_d.engines).toEqual([{ type: 'sd-webui', available: true, ok: false, detail: expect.any(String) }]);
    expect(reports.provider_a.status).toBe('operational');
    expect(reports.provider_b.status).toBe('operational');
  });

  it('closes every engine on close()', async () => {
    const engines = registry.engines();
    await registry.close();
    const llama = engines.find((engine) => engine instanceof LlamaEngine)!;
    const error = await collect(llama.generate({ model: PIPELINE_CHECK_MODEL, input: { kind: 'completion', prompt: 'x' }, sampling: {}, signal: signal() })).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).reason).toBe('unavailable');
  });
});
