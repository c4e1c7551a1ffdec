import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { InferenceConfigError } from '../../../../subgraphs/inference/config/inference-config-error.js';
import { planIncludes, providerAllows } from '../../../../subgraphs/inference/config/inference-config.js';
import { loadInferenceConfig } from '../../../../subgraphs/inference/config/load-inference-config.js';

const EXAMPLE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../docs/inference-config.example.json');
// What an upstream engine fetches image URLs with when the file says nothing: the OCR engine's limits, no private address.
const IMAGE_URLS = { maxImageBytes: 10 * 1024 * 1024, imageFetchTimeoutMs: 10_000, allowPrivateImageUrls: false };
const dir = mkdtempSync(path.join(tmpdir(), 'inference-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function configFile(content: unknown): string {
  const file = path.join(dir, `config-${++files}.json`);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

/** The lines of the error loading `content` gives, each `path: message`. */
function issuesOf(content: unknown, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    loadInferenceConfig({ ...env, INFERENCE_CONFIG: configFile(content) });
  } catch (error) {
    expect(error).toBeInstanceOf(InferenceConfigError);
    const { issues, message } = error as InferenceConfigError;
    const lines = issues.map((i) => `${i.path}: ${i.message}`);
    for (const line of lines) expect(message).toContain(line);
    return lines;
  }
  throw new Error('the configuration was accepted');
}

const upstream = (url: string) => ({ type: 'openai-upstream', url });
const fourProviders = () =>
  ['provider_a', 'provider_b', 'provider_c', 'provider_d'].map((id) => ({ id, name: id, engines: [{ type: 'llama' }] as object[] }));

describe('without INFERENCE_CONFIG', () => {
  it('serves the four providers with the embedded engines, provider_b at 3 at once', () => {
    const config = loadInferenceConfig({ DATA_DIR: '/srv/platform-data' });
    expect(config.source).toBeNull();
    expect(config.providers.map((p) => p.id)).toEqual(['provider_a', 'provider_b', 'provider_c', 'provider_d']);
    for (const provider of config.providers) {
      expect(provider.engines.map((e) => e.type)).toEqual(['llama', 'ocr']);
      expect(provider.engines[0]).toEqual({ type: 'llama', modelsDir: '/srv/platform-data/models' });
      expect(provider.engines[1]).toEqual({ type: 'ocr', maxImageBytes: 10 * 1024 * 1024, imageFetchTimeoutMs: 10_000, allowPrivateImageUrls: false, workers: 1 });
      expect(provider.capabilities).toEqual(['chat', 'completion', 'tokenize', 'vision']);
    }
    expect(config.providers.map((p) => p.maxConcurrency)).toEqual([undefined, 3, undefined, undefined]);
    expect(config.modelsDir).toBe('/srv/platform-data/models');
    expect(config.timeouts).toEqual({ generationMs: 120_000, listingMs: 30_000, imageGenerationMs: 300_000 });
    expect(config.interfaces).toEqual({
      serviceT: { providers: ['provider_a'] },
      serviceI: { providers: ['provider_d'], maxParallel: 6 },
      proxy: { providers: ['provider_d'], maxParallel: 6 },
      gateway: { providers: ['provider_a', 'provider_b', 'provider_c', 'provider_d'], defaultProvider: 'provider_c', imageListingProvider: 'provider_d' },
    });
    expect(config.defaultPlan).toBe('standard');
    expect(planIncludes(config.plans[0], 'provider_b', 'ocr-eng')).toBe(true);
  });

  it('puts the models folder under DATA_DIR, ./.data when that is unset too', () => {
    expect(loadInferenceConfig({}).modelsDir).toBe(path.resolve('.data', 'models'));
    expect(loadInferenceConfig({ INFERENCE_CONFIG: '' }).source).toBeNull();
  });
});

describe('the example file in docs/', () => {
  it('parses completely, with the key read from the variable apiKeyEnv names', () => {
    const config = loadInferenceConfig({ INFERENCE_CONFIG: EXAMPLE, PROVIDER_A_API_KEY: 'sk-example' });
    expect(config.source).toBe(EXAMPLE);
    expect(config.modelsDir).toBe('/var/lib/platform/models');
    const [a, b, c, d] = config.providers;
    expect(a.engines[0]).toEqual({
      type: 'openai-upstream',
      url: 'http://vllm.internal:8000',
      apiKey: 'sk-example',
      flavour: 'vllm',
      timeouts: { connectMs: 5000, firstByteMs: 120000, totalMs: 600000, listingMs: 30000 },
      connections: 16,
      ...IMAGE_URLS,
    });
    expect(a.engines[1]).toMatchObject({ type: 'ocr', workers: 2 });
    expect(a.aliases['vision-review']).toBe('Qwen/Qwen2.5-VL-72B-Instruct');
    expect(providerAllows(a, 'Qwen/Qwen2.5-VL-7B-Instruct')).toBe(true);
    expect(providerAllows(a, 'meta-llama/Llama-3.1-8B')).toBe(false);
    // Timeouts an upstream does not name come from the top level.
    expect(b.engines[0]).toEqual({ type: 'openai-upstream', url: 'http://llama-server.internal:8080', flavour: 'llama.cpp', timeouts: { totalMs: 120000, listingMs: 30000 }, ...IMAGE_URLS });
    expect(b.maxConcurrency).toBe(3);
    expect(c.engines[0]).toEqual({ type: 'llama', modelsDir: '/var/lib/platform/models', sequences: 4, contextSize: 4096, threads: 2 });
    expect(d.engines[1]).toEqual({ type: 'sd-webui', url: 'http://sd-webui.internal:7860', timeouts: { generationMs: 300000, listingMs: 30000 } });
    expect(d.capabilities).toContain('txt2img');
    expect(config.defaultPlan).toBe('free');
    const free = config.plans.find((p) => p.id === 'free')!;
    expect(planIncludes(free, 'provider_a', 'ocr-eng')).toBe(true);
    expect(planIncludes(free, 'provider_a', 'Qwen/Qwen2.5-VL-72B-Instruct')).toBe(false);
    expect(planIncludes(free, 'provider_d', 'sdxl')).toBe(false);
  });

  it('names the variable when the key it points at is not set', () => {
    expect(() => loadInferenceConfig({ INFERENCE_CONFIG: EXAMPLE })).toThrow('providers.provider_a.engines[0].apiKeyEnv: environment variable PROVIDER_A_API_KEY is not set');
  });
});

describe('a file that does not load', () => {
  it('says so when INFERENCE_CONFIG names a missing file or one that is not JSON', () => {
    const missing = path.join(dir, 'nope.json');
    expect(() => loadInferenceConfig({ INFERENCE_CONFIG: missing })).toThrow(`INFERENCE_CONFIG: ${missing} cannot be read (no such file)`);
    expect(() => loadInferenceConfig({ INFERENCE_CONFIG: dir })).toThrow(/cannot be read \(EISDIR\)/);
    const notJson = configFile('{ "providers": [ ');
    expect(() => loadInferenceConfig({ INFERENCE_CONFIG: notJson })).toThrow(new RegExp(`INFERENCE_CONFIG: ${notJson} is not valid JSON`));
    expect(issuesOf('[1, 2]')).toEqual(['(root): Invalid input: expected object, received array']);
  });

  it('names a bad URL by its provider id', () => {
    const providers = fourProviders();
    providers[1].engines = [upstream('not a url')];
    providers[3].engines = [{ type: 'sd-webui', url: 'ftp://images.example/' }];
    expect(issuesOf({ providers })).toEqual(['providers.provider_b.engines[0].url: Invalid URL', 'providers.provider_d.engines[0].url: Invalid URL']);
  });

  it('takes private image URLs as true or a list of addresses and networks, and names a bad entry', () => {
    const providers = fourProviders();
    providers[0].engines = [{ ...upstream('http://gpu:8000'), allowPrivateImageUrls: ['10.1.0.0/16', '127.0.0.1'] }];
    providers[1].engines = [{ ...upstream('http://gpu:8001'), allowPrivateImageUrls: ['images.internal'] }];
    providers[2].engines = [{ type: 'ocr', allowPrivateImageUrls: [] }];
    expect(issuesOf({ providers })).toEqual([
      'providers.provider_b.engines[0].allowPrivateImageUrls[0]: must be an IP address or a CIDR network, e.g. 10.1.0.0/16',
      'providers.provider_c.engines[0].allowPrivateImageUrls: Too small: expected array to have >=1 items',
    ]);
  });

  it('names an unknown engine type, an unknown key and a wrong type', () => {
    const providers = fourProviders();
    providers[0].engines = [{ type: 'llama' }, { type: 'tensorrt', url: 'http://x' }];
    (providers[2] as Record<string, unknown>).maxConcurency = 3;
    (providers[3] as Record<string, unknown>).maxConcurrency = 0;
    expect(issuesOf({ providers, timeouts: { generationMs: '120s' } })).toEqual([
      'timeouts.generationMs: Invalid input: expected number, received string',
      'providers.provider_a.engines[1].type: unknown engine type "tensorrt" (one of llama, openai-upstream, ocr, sd-webui)',
      'providers.provider_c: Unrecognized key: "maxConcurency"',
      'providers.provider_d.maxConcurrency: Too small: expected number to be >=1',
    ]);
  });

  it('names an interface or plan that refers to an unknown provider, and an unknown default plan', () => {
    expect(issuesOf({ interfaces: { gateway: { providers: ['provider_a'], imageListingProvider: 'provider_d' } } })).toEqual([
      `interfaces.gateway.imageListingProvider: "provider_d" is not one of the gateway's providers`,
    ]);
    expect(
      issuesOf({
        interfaces: { serviceT: { providers: ['provider_a', 'provider_z'] }, gateway: { providers: ['provider_a'], defaultProvider: 'provider_c' } },
        plans: [{ id: 'free', models: { provider_a: ['ocr-*'], provider_x: ['*'] } }],
        defaultPlan: 'gold',
      }),
    ).toEqual([
      'interfaces.serviceT.providers[1]: unknown provider "provider_z"',
      `interfaces.gateway.defaultProvider: "provider_c" is not one of the gateway's providers`,
      'plans.free.models.provider_x: unknown provider "provider_x"',
      'defaultPlan: unknown plan "gold"',
    ]);
  });

  it('points at the defaults when custom providers leave an interface default dangling', () => {
    const issues = issuesOf({ providers: [{ id: 'local', name: 'Local', engines: [{ type: 'ocr' }] }] });
    expect(issues).toContain('interfaces.serviceT.providers[0]: unknown provider "provider_a" (a default: set this entry in the file)');
    // The plan made for a plan-less file includes the file's own providers, so it is not among them.
    expect(issues.filter((i) => i.startsWith('plans'))).toEqual([]);
  });

  it('names duplicate provider and plan ids by index, and provider_d_image as a provider', () => {
    const providers = [...fourProviders(), { id: 'provider_b', name: 'again', engines: [{ type: 'ocr' }] }, { id: 'provider_d_image', name: 'images', engines: [{ type: 'ocr' }] }];
    expect(
      issuesOf({
        providers,
        plans: [
          { id: 'free', models: { provider_a: ['*'] } },
          { id: 'free', models: { provider_b: ['*'] } },
        ],
      }),
    ).toEqual([
      'providers[4].id: duplicate provider id "provider_b"',
      'providers.provider_d_image.id: provider_d_image is a model-listing filter, not a provider',
      'plans[1].id: duplicate plan id "free"',
    ]);
  });

  it('names capabilities without their engine, a second OCR engine, an alias the allow-list excludes, and both key forms', () => {
    const providers = fourProviders();
    providers[0].engines = [{ type: 'ocr' }, { type: 'ocr' }];
    Object.assign(providers[1], { models: ['fast-*'], aliases: { quick: 'slow-model' }, capabilities: ['chat', 'txt2img'] });
    providers[2].engines = [{ ...upstream('https://api.example.com/v1'), apiKey: 'k', apiKeyEnv: 'K' }];
    expect(issuesOf({ providers })).toEqual(['providers.provider_c.engines[0].apiKeyEnv: give apiKey or apiKeyEnv, not both']);
    providers[2].engines = [upstream('https://api.example.com/v1')];
    expect(issuesOf({ providers })).toEqual([
      'providers.provider_a.engines[1]: a provider has at most one ocr engine (it serves one model)',
      'providers.provider_b.capabilities[1]: txt2img needs an sd-webui engine',
      `providers.provider_b.aliases.quick: names "slow-model", which the provider's models list leaves out`,
    ]);
  });

  it('lists every bad entry at once', () => {
    const providers = fourProviders();
    providers[0].engines = [upstream('nope')];
    providers[1].engines = [{ type: 'gpu' }];
    expect(issuesOf({ providers, defaultPlan: 'Not An Id' })).toHaveLength(3);
  });
});

describe('a partial file', () => {
  it('takes the defaults for the keys it leaves out, and resolves relative paths from its folder', () => {
    const file = configFile({ modelsDir: 'models', timeouts: { generationMs: 60_000 } });
    const config = loadInferenceConfig({ INFERENCE_CONFIG: file });
    expect(config.modelsDir).toBe(path.join(dir, 'models'));
    expect(config.timeouts).toEqual({ generationMs: 60_000, listingMs: 30_000, imageGenerationMs: 300_000 });
    expect(config.providers.map((p) => p.id)).toEqual(['provider_a', 'provider_b', 'provider_c', 'provider_d']);
    expect(config.providers[0].engines[0]).toEqual({ type: 'llama', modelsDir: path.join(dir, 'models') });
  });

  it('gives custom providers one plan of all their models, the first plan being the default otherwise', () => {
    const providers = fourProviders();
    const config = loadInferenceConfig({ INFERENCE_CONFIG: configFile({ providers }) });
    expect(config.plans).toEqual([{ id: 'standard', name: 'Standard', models: { provider_a: ['*'], provider_b: ['*'], provider_c: ['*'], provider_d: ['*'] } }]);
    const planned = loadInferenceConfig({ INFERENCE_CONFIG: configFile({ plans: [{ id: 'basic', models: { provider_c: ['pipeline-*'] } }, { id: 'all', models: { provider_a: ['*'] } }] }) });
    expect(planned.defaultPlan).toBe('basic');
    expect(planned.plans[0]).toEqual({ id: 'basic', name: 'basic', models: { provider_c: ['pipeline-*'] } });
    expect(planIncludes(planned.plans[0], 'provider_c', 'pipeline-check')).toBe(true);
    expect(planIncludes(planned.plans[0], 'provider_c', 'xpipeline-check')).toBe(false);
    expect(planIncludes(planned.plans[0], 'provider_a', 'pipeline-check')).toBe(false);
  });
});
