import { readFileSync } from 'node:fs';
import path from 'node:path';
import { OCR_DEFAULTS } from '../engines/ocr/ocr-defaults.js';
import { IMAGE_INPUT_DEFAULTS } from '../image-input/image-input.js';
import { DEFAULT_INFERENCE_CONFIG, DEFAULT_MAX_PARALLEL, DEFAULT_TIMEOUTS } from './inference-config.defaults.js';
import { DEFAULT_USAGE_RETENTION_MONTHS } from '../usage/usage-limits.js';
import { DEFAULT_RESPONSE_RETENTION_DAYS } from '../responses/response-retention.js';
import { DEFAULT_RESPONSE_MAX_INPUT_BYTES } from '../responses/response-store.js';
import { InferenceConfigError, type ConfigIssue } from './inference-config-error.js';
import { IMAGE_LISTING_FILTER, inferenceConfigFile, type Capability, type EngineConfigInput, type InferenceConfigFile } from './inference-config.schema.js';
import type { EngineConfig, ImageUrlConfig, InferenceConfig, ProviderConfig } from './inference-config.js';
import { matchesAnyModelPattern } from './model-glob.js';

type Segment = string | number;

const ENGINE_CAPABILITIES: Record<EngineConfigInput['type'], Capability[]> = {
  llama: ['chat', 'completion', 'tokenize'],
  'openai-upstream': ['chat', 'completion', 'tokenize', 'vision'],
  ocr: ['chat', 'vision'],
  'sd-webui': ['txt2img', 'img2img', 'upscale'],
};

/**
 * The inference configuration: the JSON file INFERENCE_CONFIG names, its absent top-level keys
 * taken from the built-in defaults, or the defaults alone when it is unset. Throws an
 * InferenceConfigError listing every bad entry by its path.
 */
export function loadInferenceConfig(env: NodeJS.ProcessEnv = process.env): InferenceConfig {
  const file = env.INFERENCE_CONFIG ? path.resolve(env.INFERENCE_CONFIG) : null;
  const source = file ? `INFERENCE_CONFIG=${file}` : 'built-in defaults';
  let raw: unknown = {};
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new InferenceConfigError(source, [{ path: 'INFERENCE_CONFIG', message: `${file} cannot be read (${code === 'ENOENT' ? 'no such file' : (code ?? String(error))})` }]);
    }
    try {
      raw = JSON.parse(text);
    } catch (error) {
      throw new InferenceConfigError(source, [{ path: 'INFERENCE_CONFIG', message: `${file} is not valid JSON (${(error as Error).message})` }]);
    }
  }

  return inferenceConfigFrom(raw, file, env);
}

/**
 * The configuration of an already read file (or of an object a test builds): validated, its absent
 * keys defaulted, its paths resolved against the file's folder (the working directory without one).
 */
export function inferenceConfigFrom(raw: unknown, file: string | null, env: NodeJS.ProcessEnv = process.env): InferenceConfig {
  const source = file ? `INFERENCE_CONFIG=${file}` : 'built-in defaults';
  const parsed = inferenceConfigFile.safeParse(raw);
  if (!parsed.success) {
    throw new InferenceConfigError(
      source,
      parsed.error.issues.map((issue) => ({ path: renderPath(issue.path as Segment[], raw), message: issue.message })),
    );
  }
  const merged = withDefaults(parsed.data);
  const issues = crossCheck(merged, parsed.data, env);
  if (issues.length) throw new InferenceConfigError(source, issues.map((i) => ({ path: renderPath(i.path, merged), message: i.message })));
  return resolve(merged, file, env);
}

type FileInterfaces = NonNullable<InferenceConfigFile['interfaces']>;

interface Merged extends InferenceConfigFile {
  providers: NonNullable<InferenceConfigFile['providers']>;
  interfaces: { [K in keyof FileInterfaces]-?: NonNullable<FileInterfaces[K]> };
  plans: NonNullable<InferenceConfigFile['plans']>;
  defaultPlan: string;
}

/** Absent top-level keys take their defaults; a plan-less file gets one plan of every model. */
function withDefaults(file: InferenceConfigFile): Merged {
  const providers = file.providers ?? DEFAULT_INFERENCE_CONFIG.providers;
  const plans = file.plans ?? (file.providers ? [{ id: 'standard', name: 'Standard', models: Object.fromEntries(providers.map((p) => [p.id, ['*']])) }] : DEFAULT_INFERENCE_CONFIG.plans);
  return {
    ...file,
    providers,
    interfaces: { ...DEFAULT_INFERENCE_CONFIG.interfaces, ...file.interfaces },
    plans,
    defaultPlan: file.defaultPlan ?? (file.plans ? file.plans[0].id : DEFAULT_INFERENCE_CONFIG.defaultPlan),
  };
}

interface Issue {
  path: Segment[];
  message: string;
}

/** What the schema cannot see: references between entries, duplicates, secrets in the environment. */
function crossCheck(config: Merged, file: InferenceConfigFile, env: NodeJS.ProcessEnv): Issue[] {
  const issues: Issue[] = [];
  const providerIds = new Set<string>();
  config.providers.forEach((provider, p) => {
    if (providerIds.has(provider.id)) issues.push({ path: ['providers', p, 'id'], message: `duplicate provider id "${provider.id}"` });
    providerIds.add(provider.id);
    if (provider.id === IMAGE_LISTING_FILTER) issues.push({ path: ['providers', p, 'id'], message: `${IMAGE_LISTING_FILTER} is a model-listing filter, not a provider` });
    const types = provider.engines.map((e) => e.type);
    provider.engines.forEach((engine, e) => {
      if (engine.type === 'ocr' && types.indexOf('ocr') !== e) issues.push({ path: ['providers', p, 'engines', e], message: 'a provider has at most one ocr engine (it serves one model)' });
      if (engine.type === 'openai-upstream' && engine.apiKeyEnv && !env[engine.apiKeyEnv]) {
        issues.push({ path: ['providers', p, 'engines', e, 'apiKeyEnv'], message: `environment variable ${engine.apiKeyEnv} is not set` });
      }
    });
    provider.capabilities?.forEach((capability, c) => {
      if ((capability === 'txt2img' || capability === 'img2img') && !types.includes('sd-webui')) {
        issues.push({ path: ['providers', p, 'capabilities', c], message: `${capability} needs an sd-webui engine` });
      }
    });
    for (const [alias, target] of Object.entries(provider.aliases ?? {})) {
      if (provider.models && !matchesAnyModelPattern(provider.models, target)) {
        issues.push({ path: ['providers', p, 'aliases', alias], message: `names "${target}", which the provider's models list leaves out` });
      }
    }
  });

  const known = (id: string) => providerIds.has(id);
  const unknown = (id: string, from: string) => `unknown provider "${id}"${from in (file.interfaces ?? {}) || from === 'plans' ? '' : ' (a default: set this entry in the file)'}`;
  for (const [name, iface] of Object.entries(config.interfaces)) {
    iface.providers.forEach((id, i) => {
      if (!known(id)) issues.push({ path: ['interfaces', name, 'providers', i], message: unknown(id, name) });
    });
  }
  const gateway = config.interfaces.gateway;
  for (const key of ['defaultProvider', 'imageListingProvider'] as const) {
    const id = gateway[key];
    if (id !== undefined && !gateway.providers.includes(id)) issues.push({ path: ['interfaces', 'gateway', key], message: `"${id}" is not one of the gateway's providers` });
  }

  const planIds = new Set<string>();
  config.plans.forEach((plan, p) => {
    if (planIds.has(plan.id)) issues.push({ path: ['plans', p, 'id'], message: `duplicate plan id "${plan.id}"` });
    planIds.add(plan.id);
    for (const id of Object.keys(plan.models)) {
      if (!known(id)) issues.push({ path: ['plans', p, 'models', id], message: unknown(id, 'plans') });
    }
  });
  if (!planIds.has(config.defaultPlan)) issues.push({ path: ['defaultPlan'], message: `unknown plan "${config.defaultPlan}"` });
  return issues;
}

function imageUrls(e: { maxImageBytes?: number; imageFetchTimeoutMs?: number; allowPrivateImageUrls?: boolean | string[] }): ImageUrlConfig {
  return {
    maxImageBytes: e.maxImageBytes ?? IMAGE_INPUT_DEFAULTS.maxImageBytes,
    imageFetchTimeoutMs: e.imageFetchTimeoutMs ?? IMAGE_INPUT_DEFAULTS.imageFetchTimeoutMs,
    allowPrivateImageUrls: e.allowPrivateImageUrls ?? false,
  };
}

function resolve(config: Merged, file: string | null, env: NodeJS.ProcessEnv): InferenceConfig {
  // Paths in the file are read from the file's folder, so it can move with what it names.
  const base = file ? path.dirname(file) : process.cwd();
  const modelsDir = config.modelsDir ? path.resolve(base, config.modelsDir) : path.resolve(env.DATA_DIR || '.data', 'models');
  const timeouts = { ...DEFAULT_TIMEOUTS, ...config.timeouts };
  const engine = (e: EngineConfigInput): EngineConfig => {
    switch (e.type) {
      case 'llama':
        return { ...e, modelsDir: e.modelsDir ? path.resolve(base, e.modelsDir) : modelsDir };
      case 'openai-upstream': {
        const { apiKeyEnv, ...rest } = e;
        const apiKey = e.apiKey ?? (apiKeyEnv ? env[apiKeyEnv] : undefined);
        return {
          ...rest,
          ...(apiKey ? { apiKey } : {}),
          flavour: e.flavour ?? 'openai',
          timeouts: { ...e.timeouts, totalMs: e.timeouts?.totalMs ?? timeouts.generationMs, listingMs: e.timeouts?.listingMs ?? timeouts.listingMs },
          ...imageUrls(e),
        };
      }
      case 'ocr':
        return { type: 'ocr', ...imageUrls(e), workers: e.workers ?? OCR_DEFAULTS.workers };
      case 'sd-webui':
        return { type: 'sd-webui', url: e.url, timeouts: { generationMs: e.timeouts?.generationMs ?? timeouts.imageGenerationMs, listingMs: e.timeouts?.listingMs ?? timeouts.listingMs } };
    }
  };
  const providers: ProviderConfig[] = config.providers.map((p) => ({
    id: p.id,
    name: p.name,
    engines: p.engines.map(engine),
    ...(p.maxConcurrency !== undefined ? { maxConcurrency: p.maxConcurrency } : {}),
    ...(p.models ? { models: p.models } : {}),
    aliases: p.aliases ?? {},
    capabilities: p.capabilities ?? [...new Set(p.engines.flatMap((e) => ENGINE_CAPABILITIES[e.type]))],
    ...(p.quality ? { quality: p.quality } : {}),
  }));
  const { serviceT, serviceI, proxy, gateway } = config.interfaces;
  return {
    source: file,
    modelsDir,
    timeouts,
    providers,
    interfaces: {
      serviceT: { providers: serviceT.providers },
      serviceI: { providers: serviceI.providers, maxParallel: serviceI.maxParallel ?? DEFAULT_MAX_PARALLEL },
      proxy: { providers: proxy.providers, maxParallel: proxy.maxParallel ?? DEFAULT_MAX_PARALLEL },
      gateway: { providers: gateway.providers, defaultProvider: gateway.defaultProvider ?? gateway.providers[0], imageListingProvider: gateway.imageListingProvider ?? null },
    },
    plans: config.plans.map((plan) => ({ id: plan.id, name: plan.name ?? plan.id, models: plan.models })),
    defaultPlan: config.defaultPlan,
    usage: { retentionMonths: config.usage?.retentionMonths ?? DEFAULT_USAGE_RETENTION_MONTHS },
    responses: {
      retentionDays: config.responses?.retentionDays ?? DEFAULT_RESPONSE_RETENTION_DAYS,
      maxInputBytes: config.responses?.maxInputBytes ?? DEFAULT_RESPONSE_MAX_INPUT_BYTES,
    },
  };
}

/**
 * `providers.provider_b.engines[0].url`: entries of the providers and plans lists are named by
 * their id when it is a string no other entry has, by their index otherwise.
 */
function renderPath(segments: Segment[], root: unknown): string {
  if (!segments.length) return '(root)';
  let out = '';
  let node: unknown = root;
  segments.forEach((segment, depth) => {
    const parentKey = depth === 1 ? segments[0] : undefined;
    if (typeof segment === 'number') {
      const entry = Array.isArray(node) ? node[segment] : undefined;
      const entryId = (entry as { id?: unknown } | undefined)?.id;
      const unique = typeof entryId === 'string' && (node as { id?: unknown }[]).filter((e) => e?.id === entryId).length === 1;
      out += (parentKey === 'providers' || parentKey === 'plans') && unique && /^[\w-]+$/.test(entryId) ? `.${entryId}` : `[${segment}]`;
    } else out += out ? `.${segment}` : segment;
    node = node && typeof node === 'object' ? (node as Record<Segment, unknown>)[segment] : undefined;
  });
  return out;
}
