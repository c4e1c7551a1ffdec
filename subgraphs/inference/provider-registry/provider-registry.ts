import type { Logger } from 'pino';
import type { EngineConfig, InferenceConfig, PlanConfig, ProviderConfig } from '../config/inference-config.js';
import { planIncludes, providerAllows } from '../config/inference-config.js';
import { IMAGE_LISTING_FILTER, type Capability } from '../config/inference-config.schema.js';
import { EngineError, type EngineHealth, type EngineModel, type GenerationEvent, type GenerationRequest, type TextEngine } from '../engine/text-engine.js';
import { ensurePipelineCheckGguf } from '../engines/llama/gguf-writer.js';
import type { ImageEngine } from '../engine/image-engine.js';
import { EmbeddedUpscaleEngine } from '../engines/upscale/embedded-upscale-engine.js';
import type { ProviderStatus } from '../provider/provider-status.js';
import { EnginePool, type PooledEngine } from './engine-pool.js';
import { ProviderCooldown, type CooldownOptions } from './provider-cooldown.js';
import { ProviderRefusal } from './provider-refusal.js';
import { ProviderSlots, type ProviderSlot } from './provider-slots.js';

export type InterfaceName = keyof InferenceConfig['interfaces'];

/** A model as a provider offers it: under its engine's id or an alias. */
export interface ProviderModel {
  /** The client-facing id. */
  id: string;
  provider: string;
  /** The id the engine knows it by. */
  engineModel: string;
  /** Set when `id` is an alias. */
  aliasOf?: string;
  engine: TextEngine;
  /** The engine's own listing entry (context length, modalities, status). */
  model: EngineModel;
}

/** Where a request may go: the provider, its engine and the engine's model id. */
export interface ProviderTarget {
  provider: ProviderConfig;
  engine: TextEngine;
  engineModel: string;
  model: ProviderModel;
}

/** An image model (a WebUI checkpoint, by its model name) as a provider offers it. */
export interface ImageModel {
  id: string;
  provider: string;
  /** ready, or unavailable while its upstream cannot list its checkpoints. */
  status: 'ready' | 'unavailable';
}

/** A provider that generates images, with its image engine. */
export interface ImageTarget {
  provider: ProviderConfig;
  engine: ImageEngine;
}

/** What withFailover tells its caller of each attempt, so that every attempt can be accounted for. */
export interface FailoverHooks {
  /** An attempt starts on the target, its slot held. */
  onAttempt?(target: ProviderTarget): void;
  /** The attempt on the target failed before it answered; the next target may be tried. */
  onAttemptFailed?(target: ProviderTarget, error: unknown): void;
}

export interface ResolveRequest {
  interface: InterfaceName;
  /** The provider the client named; absent lets routing choose among those serving the model. */
  provider?: string;
  model: string;
  /** The key's plan (its id): the model must be on it. Absent for interfaces without keys. */
  plan?: string;
  capability?: Capability;
}

export interface Resolution {
  /** The client-facing model id. */
  model: string;
  /** Best first: not cooling down, then least busy, then in the configuration's order. */
  targets: ProviderTarget[];
}

export type ProviderHealthStatus = `${ProviderStatus}`;

export interface EngineReport {
  type: EngineConfig['type'];
  available: boolean;
  ok: boolean;
  detail?: string;
}

export interface ProviderReport {
  id: string;
  name: string;
  status: ProviderHealthStatus;
  inFlight: number;
  maxConcurrency: number | null;
  /** Models listed at the last probe (aliases included). */
  models: number;
  coolingDownUntil: Date | null;
  engines: EngineReport[];
}

export interface ProviderRegistryOptions {
  /** How often every engine's health() is probed; 0 probes only at start and on probe(). Default 30 s. */
  healthIntervalMs?: number;
  /** Called when a provider's status (operational, degraded, down) changes after the first probe. */
  onChange?: (report: ProviderReport) => void;
  /** Called when a provider reaches or leaves its concurrency limit (its status unchanged), coalesced per 250 ms. */
  onLoad?: (report: ProviderReport) => void;
  cooldown?: CooldownOptions;
  /** The clock, for the cooldown. */
  now?: () => number;
  /** Where the engines log what their upstreams answered (failures with the upstream's own words). */
  logger?: Logger;
}

/** How long load notifications of one provider are coalesced. */
const SATURATION_NOTICE_MS = 250;

// Failures that say the provider, not the request, is at fault: these count toward a cooldown and
// are retried on another provider. A bad request fails the same everywhere.
const PROVIDER_FAILURES = new Set<EngineError['reason']>(['upstream_error', 'unavailable', 'model_loading', 'timeout']);

/** Whether an error counts against the provider (and may be retried elsewhere). */
export function isProviderFailure(error: unknown): boolean {
  if (error instanceof ProviderRefusal) return false;
  if (error instanceof EngineError) return PROVIDER_FAILURES.has(error.reason);
  return true;
}

interface Probe {
  engines: EngineReport[];
  models: number;
  anyFailedModel: boolean;
}

/**
 * The providers of the inference configuration with their engines: lists models per provider,
 * interface and plan; resolves a request to the provider, engine and engine model id or a typed
 * refusal; caps concurrency per provider; routes among the providers serving a model (least busy,
 * skipping one in cooldown) with one retry elsewhere for a failure before the first byte, as
 * LiteLLM's router does; and probes the engines' health.
 */
export class ProviderRegistry {
  private readonly providers: Map<string, ProviderConfig>;
  private readonly slots: ProviderSlots;
  private readonly cooldown: ProviderCooldown;
  private readonly probes = new Map<string, Probe>();
  private readonly statuses = new Map<string, ProviderHealthStatus>();
  private timer: NodeJS.Timeout | undefined;
  private probing: Promise<void> | null = null;
  private closed = false;
  private upscaler: ImageEngine | undefined;
  private readonly notifyTimers = new Map<string, NodeJS.Timeout>();
  /** Each engine's last listing, kept for when it cannot list. */
  private readonly listed = new Map<TextEngine, EngineModel[]>();
  private readonly listedImages = new Map<ImageEngine, string[]>();

  private constructor(
    readonly config: InferenceConfig,
    private readonly pool: EnginePool,
    private readonly options: ProviderRegistryOptions,
  ) {
    this.providers = new Map(config.providers.map((provider) => [provider.id, provider]));
    // Reaching and leaving a provider's concurrency limit are transitions its subscribers see.
    this.slots = new ProviderSlots(
      new Map(config.providers.map((provider) => [provider.id, provider.maxConcurrency])),
      (providerId) => this.notifySoon(providerId),
    );
    this.cooldown = new ProviderCooldown(options.cooldown, options.now);
  }

  /** Starts the engines of the configuration (writing the pipeline-check model where the default llama engine reads) and probes them once. */
  static async create(config: InferenceConfig, options: ProviderRegistryOptions = {}): Promise<ProviderRegistry> {
    const engines = config.providers.flatMap((provider) => provider.engines);
    if (engines.some((engine) => engine.type === 'llama' && engine.modelsDir === config.modelsDir)) await ensurePipelineCheckGguf(config.modelsDir);
    const pool = new EnginePool(options.logger);
    for (const engine of engines) pool.get(engine);
    const registry = new ProviderRegistry(config, pool, options);
    await registry.probe();
    const interval = options.healthIntervalMs ?? 30_000;
    if (interval > 0) {
      registry.timer = setInterval(() => void registry.probe(), interval);
      registry.timer.unref();
    }
    return registry;
  }

  /** The distinct engines running (providers with identical engine entries share one). */
  engines(): TextEngine[] {
    return this.pool.running();
  }

  provider(id: string): ProviderConfig {
    const provider = this.providers.get(id);
    if (!provider) throw new ProviderRefusal('unknown_provider', `Unknown provider "${id}"`, 'provider');
    return provider;
  }

  private pooled(provider: ProviderConfig): PooledEngine[] {
    return provider.engines.map((engine) => this.pool.get(engine));
  }

  /** The provider's models: its engines' in order (the first engine listing an id serves it), through its allow-list, then its aliases. */
  async modelsOf(providerId: string): Promise<ProviderModel[]> {
    return (await this.listingOf(providerId)).models;
  }

  /**
   * The provider's models, and whether one of its engines could not list them now without a
   * listing to fall back on (an upstream down since the start): then a model it does not list
   * may still be its, and a request for it is answered 503, not 404.
   */
  private async listingOf(providerId: string): Promise<{ models: ProviderModel[]; unknown: boolean }> {
    const provider = this.provider(providerId);
    const byId = new Map<string, ProviderModel>();
    let unknown = false;
    for (const pooled of this.pooled(provider)) {
      if (!pooled.engine) continue;
      let models: EngineModel[];
      try {
        models = await pooled.engine.models();
        this.listed.set(pooled.engine, models);
      } catch (error) {
        // An engine that cannot list now (an upstream down) keeps its last listing, each model
        // marked unavailable: a client retries a 503 but takes a 404 for good.
        const last = this.listed.get(pooled.engine);
        if (!last) unknown = true;
        const why = error instanceof EngineError ? error.message : 'The engine could not list its models';
        models = (last ?? []).map((model) => ({ ...model, status: 'unavailable', error: why }));
      }
      for (const model of models) {
        if (byId.has(model.id) || !providerAllows(provider, model.id)) continue;
        byId.set(model.id, { id: model.id, provider: provider.id, engineModel: model.id, engine: pooled.engine, model });
      }
    }
    const aliases: ProviderModel[] = [];
    for (const [alias, target] of Object.entries(provider.aliases)) {
      const base = byId.get(target);
      if (base && !byId.has(alias)) aliases.push({ ...base, id: alias, aliasOf: target });
    }
    return { models: [...byId.values(), ...aliases], unknown };
  }

  /**
   * The models an interface lists: of all its providers, or of the one named. On the gateway
   * provider_d_image lists no text model (its image models are listImageModels'). With a plan,
   * only the models on it.
   */
  async listModels(request: { interface: InterfaceName; provider?: string; plan?: string }): Promise<ProviderModel[]> {
    const iface = this.config.interfaces[request.interface];
    let providerIds = iface.providers;
    if (request.provider !== undefined) {
      if (request.interface === 'gateway' && request.provider === IMAGE_LISTING_FILTER) return [];
      providerIds = [this.interfaceProvider(request.interface, request.provider)];
    }
    const plan = request.plan === undefined ? undefined : this.plan(request.plan);
    const lists = await Promise.all(providerIds.map((id) => this.modelsOf(id)));
    return lists.flat().filter((model) => !plan || planIncludes(plan, model.provider, model.id));
  }

  /**
   * The image models (the WebUI's checkpoints) the gateway lists: of every provider with an image
   * engine, of the one named, or with provider_d_image of the image listing provider (every image
   * provider when none is configured). Like text models, an upstream that cannot list keeps its
   * last listing, marked unavailable. Other interfaces list text models only.
   */
  async listImageModels(request: { interface: InterfaceName; provider?: string }): Promise<ImageModel[]> {
    if (request.interface !== 'gateway') return [];
    let providerIds = this.config.interfaces.gateway.providers;
    if (request.provider === IMAGE_LISTING_FILTER) {
      const listing = this.config.interfaces.gateway.imageListingProvider;
      if (listing) providerIds = [listing];
    } else if (request.provider !== undefined) providerIds = [this.interfaceProvider('gateway', request.provider)];
    const lists = await Promise.all(providerIds.map((id) => this.imageModelsOf(id)));
    return lists.flat();
  }

  /** The checkpoints of the provider's image engine, none without one. */
  async imageModelsOf(providerId: string): Promise<ImageModel[]> {
    const provider = this.provider(providerId);
    const engine = this.pooled(provider).find((pooled) => pooled.imageEngine)?.imageEngine;
    if (!engine) return [];
    let names: string[];
    let status: ImageModel['status'] = 'ready';
    try {
      names = await engine.models();
      this.listedImages.set(engine, names);
    } catch {
      names = this.listedImages.get(engine) ?? [];
      status = 'unavailable';
    }
    return names.map((id) => ({ id, provider: provider.id, status }));
  }

  /** The models a plan includes, on every provider. */
  async modelsOnPlan(planId: string): Promise<ProviderModel[]> {
    const plan = this.plan(planId);
    const lists = await Promise.all(this.config.providers.map((provider) => this.modelsOf(provider.id)));
    return lists.flat().filter((model) => planIncludes(plan, model.provider, model.id));
  }

  private plan(id: string): PlanConfig {
    const plan = this.config.plans.find((entry) => entry.id === id);
    if (!plan) throw new ProviderRefusal('not_on_plan', `The key's plan "${id}" is not in the configuration`);
    return plan;
  }

  private interfaceProvider(name: InterfaceName, providerId: string): string {
    const providers = this.config.interfaces[name].providers;
    if (name === 'gateway' && providerId === IMAGE_LISTING_FILTER) {
      throw new ProviderRefusal('unknown_provider', `${IMAGE_LISTING_FILTER} only filters the model listing; name one of ${providers.join(', ')}`, 'provider');
    }
    if (!providers.includes(providerId)) throw new ProviderRefusal('unknown_provider', `Unknown provider "${providerId}"; one of ${providers.join(', ')}`, 'provider');
    return providerId;
  }

  /** The providers that may serve a request, best first, or a refusal: unknown provider, model not found (404), not on the plan (403), capability not served. */
  async resolve(request: ResolveRequest): Promise<Resolution> {
    const providerIds = request.provider === undefined ? this.config.interfaces[request.interface].providers : [this.interfaceProvider(request.interface, request.provider)];
    const listings = await Promise.all(providerIds.map((id) => this.listingOf(id)));
    let found = listings.flatMap(({ models }) => models.filter((model) => model.id === request.model));
    const where = request.provider ?? `the providers of ${request.interface}`;
    if (found.length === 0) {
      const unknown = providerIds.filter((_, i) => listings[i]!.unknown);
      if (unknown.length > 0) throw new ProviderRefusal('unavailable', `Model "${request.model}" cannot be looked up now: ${unknown.join(', ')} cannot be reached; try again shortly`);
      throw new ProviderRefusal('model_not_found', `Model "${request.model}" is not served by ${where}`, 'model');
    }
    if (request.plan !== undefined) {
      const plan = this.plan(request.plan);
      found = found.filter((model) => planIncludes(plan, model.provider, model.id));
      if (found.length === 0) throw new ProviderRefusal('not_on_plan', `Model "${request.model}" is not on the key's plan (${plan.name})`, 'model');
    }
    const capability = request.capability;
    if (capability !== undefined) {
      found = found.filter((model) => this.provider(model.provider).capabilities.includes(capability) && (capability !== 'vision' || model.model.inputModalities.includes('image')));
      if (found.length === 0) throw new ProviderRefusal('capability_not_served', `${where} does not serve ${capability} with model "${request.model}"`, request.provider ? 'provider' : 'model');
    }
    return { model: request.model, targets: this.rank(found.map((model) => ({ provider: this.provider(model.provider), engine: model.engine, engineModel: model.engineModel, model }))) };
  }

  // A provider in cooldown, or whose engine cannot list now, goes last rather than out: when it
  // alone serves the model, trying it beats refusing (LiteLLM likewise never cools down a model
  // group's only deployment), and an upstream back up answers at once.
  private rank(targets: ProviderTarget[]): ProviderTarget[] {
    const order = this.config.providers.map((provider) => provider.id);
    const key = (target: ProviderTarget) => [
      this.cooldown.coolingUntil(target.provider.id) === null && target.model.model.status !== 'unavailable' ? 0 : 1,
      this.slots.count(target.provider.id),
      order.indexOf(target.provider.id),
    ];
    return targets
      .map((target) => ({ target, key: key(target) }))
      .sort((a, b) => a.key[0] - b.key[0] || a.key[1] - b.key[1] || a.key[2] - b.key[2])
      .map(({ target }) => target);
  }

  /** A slot on the provider, or ProviderRefusal 'busy' at once when it is at its maxConcurrency. */
  acquire(providerId: string, signal?: AbortSignal): ProviderSlot {
    this.provider(providerId);
    return this.slots.acquire(providerId, signal);
  }

  inFlight(providerId: string): number {
    return this.slots.count(providerId);
  }

  /** Counts a failure of the provider (after the first byte, the interface reports it here); three in a minute start a cooldown. */
  recordFailure(providerId: string, error: unknown): void {
    if (!isProviderFailure(error)) return;
    if (this.cooldown.fail(providerId)) this.publish(providerId);
  }

  /**
   * Runs `attempt` on the best target with a slot held; a provider failure before it resolves (before
   * the first byte) is counted and retried once on the next target. A busy target is skipped. The
   * caller releases the slot it gets back when the request ends.
   */
  async withFailover<T>(
    targets: ProviderTarget[],
    attempt: (target: ProviderTarget) => Promise<T>,
    signal?: AbortSignal,
    hooks: FailoverHooks = {},
  ): Promise<{ value: T; target: ProviderTarget; slot: ProviderSlot }> {
    let failure: unknown;
    let busy: unknown;
    let tries = 0;
    for (const target of targets) {
      let slot: ProviderSlot;
      try {
        slot = this.acquire(target.provider.id, signal);
      } catch (error) {
        if (error instanceof ProviderRefusal && error.reason === 'busy') {
          busy = error;
          continue;
        }
        throw error;
      }
      hooks.onAttempt?.(target);
      try {
        return { value: await attempt(target), target, slot };
      } catch (error) {
        slot.release();
        hooks.onAttemptFailed?.(target, error);
        if (signal?.aborted || !isProviderFailure(error)) throw error;
        this.recordFailure(target.provider.id, error);
        failure = error;
        if (++tries === 2) break;
      }
    }
    throw failure ?? busy ?? new ProviderRefusal('unavailable', 'No provider can serve the request');
  }

  /** A generation on the best target, failing over once before its first event; the slot is held until the stream ends. `onTarget` learns which target answered. */
  async *generate(targets: ProviderTarget[], request: Omit<GenerationRequest, 'model'>, onTarget?: (target: ProviderTarget) => void, hooks?: FailoverHooks): AsyncGenerator<GenerationEvent> {
    const { value, target, slot } = await this.withFailover(
      targets,
      async (candidate) => {
        const events = candidate.engine.generate({ ...request, model: candidate.engineModel })[Symbol.asyncIterator]();
        return { events, first: await events.next() };
      },
      request.signal,
      hooks,
    );
    onTarget?.(target);
    try {
      let next = value.first;
      while (!next.done) {
        yield next.value;
        next = await value.events.next();
      }
    } catch (error) {
      this.recordFailure(target.provider.id, error);
      throw error;
    } finally {
      slot.release();
      await value.events.return?.();
    }
  }

  /** Probes every engine's health and the providers' model counts; calls onChange for each status that changed. */
  probe(): Promise<void> {
    this.probing ??= this.runProbe().finally(() => {
      this.probing = null;
    });
    return this.probing;
  }

  private async runProbe(): Promise<void> {
    if (this.closed) return;
    const health = new Map<TextEngine, Promise<EngineHealth>>();
    const check = (engine: TextEngine) => {
      let promise = health.get(engine);
      if (!promise) {
        promise = engine.health().catch((error: unknown) => ({ ok: false, detail: (error as Error).message }));
        health.set(engine, promise);
      }
      return promise;
    };
    await Promise.all(
      this.config.providers.map(async (provider) => {
        const engines = await Promise.all(
          this.pooled(provider).map(async (pooled): Promise<EngineReport> => {
            if (pooled.imageEngine) {
              // An image upstream is probed like a text engine: its health is the provider's too.
              const result = await pooled.imageEngine.health().catch((error: unknown) => ({ ok: false, detail: (error as Error).message }));
              return { type: pooled.config.type, available: true, ok: result.ok, ...(result.detail ? { detail: result.detail } : {}) };
            }
            if (!pooled.engine) return { type: pooled.config.type, available: false, ok: false, detail: pooled.unavailable };
            const result = await check(pooled.engine);
            return { type: pooled.config.type, available: true, ok: result.ok, ...(result.detail ? { detail: result.detail } : {}) };
          }),
        );
        const models = await this.modelsOf(provider.id);
        this.probes.set(provider.id, { engines, models: models.length, anyFailedModel: models.some((model) => model.model.status === 'failed') });
      }),
    );
    if (this.closed) return;
    for (const provider of this.config.providers) this.publish(provider.id);
  }

  private report(provider: ProviderConfig): ProviderReport {
    const probe = this.probes.get(provider.id) ?? { engines: [], models: 0, anyFailedModel: false };
    const until = this.cooldown.coolingUntil(provider.id);
    const running = probe.engines.filter((engine) => engine.available);
    let status: ProviderHealthStatus = 'operational';
    if (running.length === 0 || running.every((engine) => !engine.ok)) status = 'down';
    else if (until !== null || probe.anyFailedModel || probe.engines.some((engine) => !engine.ok)) status = 'degraded';
    return {
      id: provider.id,
      name: provider.name,
      status,
      inFlight: this.slots.count(provider.id),
      maxConcurrency: provider.maxConcurrency ?? null,
      models: probe.models,
      coolingDownUntil: until === null ? null : new Date(until),
      engines: probe.engines,
    };
  }

  /**
   * The image engines of an interface's providers (of the one named), in configuration order:
   * providers with an sd-webui engine. Empty when none has one: image generation is then refused
   * with the setting to configure, never faked.
   */
  imageTargets(request: { interface: InterfaceName; provider?: string; capability?: Capability }): ImageTarget[] {
    const ids = request.provider === undefined ? this.config.interfaces[request.interface].providers : [this.interfaceProvider(request.interface, request.provider)];
    return ids.flatMap((id) => {
      const provider = this.provider(id);
      if (request.capability !== undefined && !provider.capabilities.includes(request.capability)) return [];
      const engine = this.pooled(provider).find((pooled) => pooled.imageEngine)?.imageEngine;
      return engine ? [{ provider, engine }] : [];
    });
  }

  /** The embedded non-neural upscalers (None, Lanczos, Nearest), for interfaces whose providers have no image upstream. */
  embeddedUpscaler(): ImageEngine {
    this.upscaler ??= new EmbeddedUpscaleEngine();
    return this.upscaler;
  }

  /**
   * Tells onLoad about a provider whose status did not change but whose load did (at its limit,
   * or no longer): at most once per 250 ms per provider, with the state at that moment, so a
   * provider flapping at its limit under load costs a few notifications a second, not two per request.
   */
  private notifySoon(providerId: string): void {
    if (this.closed || this.notifyTimers.has(providerId)) return;
    const timer = setTimeout(() => {
      this.notifyTimers.delete(providerId);
      if (!this.closed) this.options.onLoad?.(this.report(this.provider(providerId)));
    }, SATURATION_NOTICE_MS);
    timer.unref();
    this.notifyTimers.set(providerId, timer);
  }

  /** Every provider's status with its in-flight requests and model count. */
  status(): ProviderReport[] {
    return this.config.providers.map((provider) => this.report(provider));
  }

  private publish(providerId: string): void {
    const report = this.report(this.provider(providerId));
    const previous = this.statuses.get(providerId);
    this.statuses.set(providerId, report.status);
    if (previous !== undefined && previous !== report.status) this.options.onChange?.(report);
  }

  /** Stops probing and closes every engine. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    for (const timer of this.notifyTimers.values()) clearTimeout(timer);
    await this.probing;
    await this.pool.close();
    await this.upscaler?.close();
  }
}
