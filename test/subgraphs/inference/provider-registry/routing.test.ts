import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadInferenceConfig } from '../../../../subgraphs/inference/config/load-inference-config.js';
import { EngineError, type GenerationRequest } from '../../../../subgraphs/inference/engine/text-engine.js';
import { ProviderRefusal } from '../../../../subgraphs/inference/provider-registry/provider-refusal.js';
import { ProviderRegistry, type ProviderReport } from '../../../../subgraphs/inference/provider-registry/provider-registry.js';
import { LoopbackOpenAiServer } from '../../../support/loopback-openai-server.js';
import { collect } from '../llama/collect.js';

// provider_a and provider_c name the same upstream (one engine), provider_b another, limited to one request.
let dir: string;
let first: LoopbackOpenAiServer;
let second: LoopbackOpenAiServer;
let registry: ProviderRegistry;
let clock = Date.now();
const changes: ProviderReport[] = [];

const request: Omit<GenerationRequest, 'model'> = { input: { kind: 'chat', messages: [{ role: 'user', content: 'hi' }] }, sampling: {}, signal: new AbortController().signal };
const generations = (server: LoopbackOpenAiServer) => server.requests.filter((recorded) => recorded.path === '/v1/chat/completions').length;

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (caught: unknown) => caught,
  );
}

beforeAll(async () => {
  [first, second] = await Promise.all([LoopbackOpenAiServer.start('vllm'), LoopbackOpenAiServer.start('vllm')]);
  dir = await mkdtemp(join(tmpdir(), 'provider-routing-'));
  const upstream = (server: LoopbackOpenAiServer) => ({ type: 'openai-upstream', url: server.url, flavour: 'vllm' });
  const file = join(dir, 'inference.json');
  await writeFile(
    file,
    JSON.stringify({
      providers: [
        { id: 'provider_a', name: 'A', engines: [upstream(first)] },
        { id: 'provider_b', name: 'B', engines: [upstream(second)], maxConcurrency: 1 },
        { id: 'provider_c', name: 'C', engines: [upstream(first)] },
        { id: 'provider_d', name: 'D', engines: [upstream(second)] },
      ],
      interfaces: {
        serviceT: { providers: ['provider_a'] },
        serviceI: { providers: ['provider_d'] },
        proxy: { providers: ['provider_d'] },
        gateway: { providers: ['provider_a', 'provider_b', 'provider_c'] },
      },
    }),
  );
  registry = await ProviderRegistry.create(loadInferenceConfig({ INFERENCE_CONFIG: file }), { healthIntervalMs: 0, now: () => clock, onChange: (report) => changes.push(report) });
});

afterAll(async () => {
  await registry?.close();
  await Promise.all([first?.close(), second?.close()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  first.reset();
  second.reset();
  changes.length = 0;
  // Past any cooldown an earlier test started, and every provider probed healthy again.
  clock += 10 * 60_000;
  await registry.probe();
});

describe('routing among the providers serving a model', () => {
  it('starts one engine for identical upstream entries', () => {
    expect(registry.engines()).toHaveLength(2);
  });

  it('retries a failure before the first byte once on the next provider, and counts it', async () => {
    const { targets } = await registry.resolve({ interface: 'gateway', model: 'loop-model' });
    expect(targets.map((target) => target.provider.id)).toEqual(['provider_a', 'provider_b', 'provider_c']);
    first.behaviour.fail = { status: 500, message: 'CUDA out of memory' };
    second.behaviour.reply = ['from', ' the', ' second'];
    const answer = await collect(registry.generate(targets, request));
    expect(answer.text).toBe('from the second');
    expect([generations(first), generations(second)]).toEqual([1, 1]);
    expect(registry.inFlight('provider_b')).toBe(0);
  });

  it('gives up after one retry: the second failure is the answer', async () => {
    const { targets } = await registry.resolve({ interface: 'gateway', model: 'loop-model' });
    first.behaviour.fail = { status: 500, message: 'down' };
    second.behaviour.fail = { status: 503, message: 'overloaded' };
    const error = await failure(collect(registry.generate(targets, request)));
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).reason).toBe('unavailable');
    // provider_c (the first server again) was not tried a third time.
    expect([generations(first), generations(second)]).toEqual([1, 1]);
  });

  it('does not retry a failure after the first byte, nor a bad request', async () => {
    const { targets } = await registry.resolve({ interface: 'gateway', model: 'loop-model' });
    first.behaviour.streamErrorAfter = { chunks: 2, code: 500, message: 'worker died', type: 'InternalServerError' };
    const deltas: string[] = [];
    const error = await failure(
      (async () => {
        for await (const event of registry.generate(targets, request)) if (event.type === 'delta') deltas.push(event.text);
      })(),
    );
    expect(error).toBeInstanceOf(EngineError);
    expect(deltas.join('')).toBe('Hello,');
    expect(generations(second)).toBe(0);
    first.reset();
    first.behaviour.fail = { status: 400, message: 'temperature out of range', param: 'temperature' };
    for (let i = 0; i < 4; i++) expect(((await failure(collect(registry.generate(targets, request)))) as EngineError).reason).toBe('invalid_request');
    expect(generations(second)).toBe(0);
    // A client's bad request says nothing about the provider: no cooldown.
    expect(registry.status()[0].coolingDownUntil).toBeNull();
  });

  it('cools a provider down after three failures within a minute: routing puts it last until the cooldown ends', async () => {
    const { targets } = await registry.resolve({ interface: 'gateway', provider: 'provider_a', model: 'loop-model' });
    first.behaviour.fail = { status: 500, message: 'down' };
    for (let i = 0; i < 2; i++) await failure(collect(registry.generate(targets, request)));
    expect(registry.status()[0].status).toBe('operational');
    // Failures older than the window do not count.
    clock += 61_000;
    await failure(collect(registry.generate(targets, request)));
    await failure(collect(registry.generate(targets, request)));
    expect(changes).toEqual([]);
    await failure(collect(registry.generate(targets, request)));
    const report = registry.status()[0];
    expect([report.status, report.coolingDownUntil?.getTime()]).toEqual(['degraded', clock + 30_000]);
    expect(changes.map((change) => [change.id, change.status])).toEqual([['provider_a', 'degraded']]);
    first.reset();
    const cooling = await registry.resolve({ interface: 'gateway', model: 'loop-model' });
    expect(cooling.targets.map((target) => target.provider.id)).toEqual(['provider_b', 'provider_c', 'provider_a']);
    clock += 30_000;
    const recovered = await registry.resolve({ interface: 'gateway', model: 'loop-model' });
    expect(recovered.targets.map((target) => target.provider.id)).toEqual(['provider_a', 'provider_b', 'provider_c']);
    await registry.probe();
    expect(changes.map((change) => [change.id, change.status])).toEqual([
      ['provider_a', 'degraded'],
      ['provider_a', 'operational'],
    ]);
  });

  it('routes to the least busy provider and skips a busy one without counting it as a failure', async () => {
    const held = registry.acquire('provider_a', request.signal);
    try {
      const { targets } = await registry.resolve({ interface: 'gateway', model: 'loop-model' });
      expect(targets.map((target) => target.provider.id)).toEqual(['provider_b', 'provider_c', 'provider_a']);
      const busy = registry.acquire('provider_b', request.signal);
      try {
        const refusal = (() => {
          try {
            registry.acquire('provider_b', request.signal);
          } catch (error) {
            return error;
          }
        })();
        expect(refusal).toBeInstanceOf(ProviderRefusal);
        expect((refusal as ProviderRefusal).reason).toBe('busy');
        // provider_b is full: the generation goes to provider_c at once.
        await collect(registry.generate(targets, request));
        expect([generations(first), generations(second)]).toEqual([1, 0]);
        // Only busy providers: the refusal is 'busy' (429), not a failure.
        const onlyB = targets.filter((target) => target.provider.id === 'provider_b');
        const error = await failure(collect(registry.generate(onlyB, request)));
        expect([(error as ProviderRefusal).reason]).toEqual(['busy']);
      } finally {
        busy.release();
      }
    } finally {
      held.release();
    }
    expect(registry.status().map((report) => report.inFlight)).toEqual([0, 0, 0, 0]);
  });

  it('an abort is not a provider failure and is not retried', async () => {
    const { targets } = await registry.resolve({ interface: 'gateway', model: 'loop-model' });
    first.behaviour.headerDelayMs = 2_000;
    const controller = new AbortController();
    const pending = failure(collect(registry.generate(targets, { ...request, signal: controller.signal })));
    setTimeout(() => controller.abort(), 50);
    await pending;
    expect(generations(second)).toBe(0);
    expect(registry.inFlight('provider_a')).toBe(0);
  });
});

describe('health', () => {
  it('probes the engines: an upstream answering 503 takes its providers down, and back up when it recovers', async () => {
    expect(registry.status().map((report) => [report.id, report.status, report.models])).toEqual([
      ['provider_a', 'operational', 1],
      ['provider_b', 'operational', 1],
      ['provider_c', 'operational', 1],
      ['provider_d', 'operational', 1],
    ]);
    second.behaviour.fail = { status: 503, message: 'overloaded' };
    await registry.probe();
    const down = registry.status().find((report) => report.id === 'provider_b')!;
    expect([down.status, down.engines[0].ok]).toEqual(['down', false]);
    expect(changes.map((change) => [change.id, change.status]).sort()).toEqual([
      ['provider_b', 'down'],
      ['provider_d', 'down'],
    ]);
    second.reset();
    await registry.probe();
    expect(registry.status().every((report) => report.status === 'operational')).toBe(true);
    expect(changes.slice(2).map((change) => change.status)).toEqual(['operational', 'operational']);
  });

  it('tells onLoad when a provider reaches its concurrency limit and when it leaves it, with its in-flight count', async () => {
    const file = loadInferenceConfig({ INFERENCE_CONFIG: join(dir, 'inference.json') });
    let next: (report: ProviderReport) => void = () => {};
    const seen = () => new Promise<ProviderReport>((resolve) => (next = resolve));
    const loaded = await ProviderRegistry.create(file, { healthIntervalMs: 0, onLoad: (report) => next(report) });
    try {
      const full = seen();
      const slot = loaded.acquire('provider_b');
      expect(await full).toMatchObject({ id: 'provider_b', inFlight: 1, maxConcurrency: 1 });
      const free = seen();
      slot.release();
      expect(await free).toMatchObject({ id: 'provider_b', inFlight: 0 });
    } finally {
      await loaded.close();
    }
  });

  it('probes on its interval', async () => {
    const seen: ProviderReport[] = [];
    const file = loadInferenceConfig({ INFERENCE_CONFIG: join(dir, 'inference.json') });
    const probing = await ProviderRegistry.create(file, { healthIntervalMs: 50, onChange: (report) => seen.push(report) });
    try {
      second.behaviour.fail = { status: 503, message: 'overloaded' };
      await expect.poll(() => seen.map((report) => report.id).sort(), { timeout: 5_000 }).toEqual(['provider_b', 'provider_d']);
    } finally {
      await probing.close();
    }
  });
});
