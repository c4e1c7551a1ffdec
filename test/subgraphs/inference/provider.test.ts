import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, subscribe, type ExecutionResult } from 'graphql';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { InferenceConfig } from '../../../subgraphs/inference/config/inference-config.js';
import { loadInferenceConfig } from '../../../subgraphs/inference/config/load-inference-config.js';
import { EngineError } from '../../../subgraphs/inference/engine/text-engine.js';
import { inferenceParts } from '../../../subgraphs/inference/index.js';
import type { InferenceContext, InferenceRuntime } from '../../../subgraphs/inference/inference-context.js';
import { ProviderRegistry } from '../../../subgraphs/inference/provider-registry/provider-registry.js';
import { ProviderStatusFeed } from '../../../subgraphs/inference/provider/provider-status.feed.js';
import { UsageRecorder } from '../../../subgraphs/inference/usage/usage-recorder.js';
import { createSubgraph, type Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { createTestDatabase } from '../../support/database.js';
import { LoopbackOpenAiServer } from '../../support/loopback-openai-server.js';
import { principalFor, run, TEST_SECRET } from '../../support/subgraph-harness.js';
import { DEFAULT_JSON_MAX_DEPTH } from '../../../core/json-depth.js';

// The subgraph with a real registry over two loopback upstreams (provider_b limited to two
// requests at once), its provider rows synced from the configuration and kept current by the
// feed, as the subgraph's start does it.
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let dir: string;
let upstreams: LoopbackOpenAiServer[];
let config: InferenceConfig;
let registry: ProviderRegistry;
let usage: UsageRecorder;
let feed: ProviderStatusFeed;
let subgraph: Subgraph<InferenceContext>;
let clock = Date.UTC(2026, 10, 23, 12);
const statements: string[] = [];
const logger = pino({ level: 'silent' });

beforeAll(async () => {
  db = await createTestDatabase();
  upstreams = await Promise.all([LoopbackOpenAiServer.start('vllm'), LoopbackOpenAiServer.start('vllm', [
    { id: 'loop-model', contextLength: 4096 },
    { id: 'loop-vision', contextLength: 4096, vision: true },
  ])]);
  dir = await mkdtemp(join(tmpdir(), 'provider-graphql-'));
  const file = join(dir, 'inference.json');
  const upstream = (server: LoopbackOpenAiServer) => ({ type: 'openai-upstream', url: server.url, flavour: 'vllm' });
  await writeFile(
    file,
    JSON.stringify({
      providers: [
        { id: 'provider_a', name: 'Provider A', engines: [upstream(upstreams[0])] },
        { id: 'provider_b', name: 'Provider B', engines: [upstream(upstreams[1])], maxConcurrency: 2, aliases: { fast: 'loop-model' } },
      ],
      interfaces: {
        serviceT: { providers: ['provider_a'] },
        serviceI: { providers: ['provider_b'] },
        proxy: { providers: ['provider_b'] },
        gateway: { providers: ['provider_a', 'provider_b'] },
      },
    }),
  );
  config = loadInferenceConfig({ INFERENCE_CONFIG: file });
  let runtime: InferenceRuntime | undefined;
  subgraph = await createSubgraph<InferenceContext>(
    inferenceParts,
    { databaseUrl: db.url, internalSecret: TEST_SECRET, logger, onQuery: (sql) => statements.push(sql) },
    (base) => ({ ...base, inference: runtime! }),
  );
  feed = new ProviderStatusFeed(subgraph.orm, subgraph.pubsub, logger);
  registry = await ProviderRegistry.create(config, { healthIntervalMs: 0, now: () => clock, onChange: (report) => feed.changed(report) });
  await feed.sync(config, registry.status());
  usage = new UsageRecorder(subgraph.orm, { logger });
  runtime = { config, orm: subgraph.orm, registry, usage, jsonMaxDepth: DEFAULT_JSON_MAX_DEPTH };
});

afterAll(async () => {
  await registry?.close();
  await feed?.settled();
  await usage?.close();
  await subgraph?.close();
  await Promise.all((upstreams ?? []).map((server) => server.close()));
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  // Past any cooldown an earlier test started, probed healthy again, and that change stored.
  clock += 10 * 60_000;
  await registry.probe();
  await feed.settled();
});

const FIELDS = 'id name status capabilities interfaces inFlight maxConcurrency modelCount coolingDownUntil';
const text = () => principalFor(undefined, 'text');
const admin = () => principalFor(undefined, 'admin');

/** Three failures within a minute: the registry cools the provider down and reports it degraded. */
function failThrice(providerId: string): void {
  for (let i = 0; i < 3; i++) registry.recordFailure(providerId, new EngineError('upstream_error', 'CUDA out of memory'));
}

/** A live `providerStatusChanged` through graphql-js over the subgraph's schema, listening once `next` has been called. */
async function statusChanges(id: string) {
  const result = await subscribe({
    schema: subgraph.schema,
    document: parse(`subscription($id: ID) { providerStatusChanged(id: $id) { ${FIELDS} } }`),
    variableValues: { id },
    contextValue: subgraph.contextFor(text()),
  });
  if (!(Symbol.asyncIterator in result)) throw new Error(`subscription refused: ${JSON.stringify(result)}`);
  const iterator = result as AsyncGenerator<ExecutionResult<{ providerStatusChanged: Record<string, unknown> }>>;
  // The first next() starts the resolver's generator, which subscribes to the topic at once.
  const first = iterator.next();
  return {
    first: async () => {
      const event = await first;
      expect(event.value?.errors).toBeUndefined();
      // As the wire carries it: DateTime serialises to a Date, which JSON writes as ISO text.
      return JSON.parse(JSON.stringify(event.value!.data!.providerStatusChanged));
    },
    stop: () => iterator.return(undefined),
  };
}

describe('providers', () => {
  it('lists the configured providers, ordered by id, with their interfaces and live figures', async () => {
    const result = await run(subgraph, text(), `{ providers { ${FIELDS} } }`);
    expect(result.errors).toBeUndefined();
    expect(result.data!.providers).toEqual([
      {
        id: 'provider_a',
        name: 'Provider A',
        status: 'OPERATIONAL',
        capabilities: ['chat', 'completion', 'tokenize', 'vision'],
        interfaces: ['SERVICE_T', 'GATEWAY'],
        inFlight: 0,
        maxConcurrency: null,
        modelCount: 1,
        coolingDownUntil: null,
      },
      {
        id: 'provider_b',
        name: 'Provider B',
        status: 'OPERATIONAL',
        capabilities: ['chat', 'completion', 'tokenize', 'vision'],
        interfaces: ['SERVICE_I', 'PROXY', 'GATEWAY'],
        inFlight: 0,
        maxConcurrency: 2,
        // Two listed models and an alias.
        modelCount: 3,
        coolingDownUntil: null,
      },
    ]);
  });

  it('looks up one provider by id', async () => {
    const result = await run(subgraph, text(), `query($id: ID!) { provider(id: $id) { id name maxConcurrency } }`, { id: 'provider_b' });
    expect(result.errors).toBeUndefined();
    expect(result.data!.provider).toEqual({ id: 'provider_b', name: 'Provider B', maxConcurrency: 2 });
  });

  it('answers null for an unknown provider, and for the retired services of the old seed', async () => {
    for (const id of ['provider_z', 'service-t', 'service-i', 'service-i-proxy']) {
      const result = await run(subgraph, text(), `query($id: ID!) { provider(id: $id) { id } }`, { id });
      expect(result.errors).toBeUndefined();
      expect(result.data!.provider, id).toBeNull();
    }
  });

  it('shows text and image keys the same providers, and refuses membership keys', async () => {
    const textResult = await run(subgraph, principalFor('acct-text', 'text'), '{ providers { id } }');
    const image = await run(subgraph, principalFor('acct-image', 'image'), '{ providers { id } }');
    expect(textResult.data!.providers).toEqual(image.data!.providers);
    expect(textResult.data!.providers).toHaveLength(2);
    const live = await run(subgraph, principalFor('acct-live', 'live'), '{ providers { id } }');
    expect(live.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'wrong_key_kind' });
  });

  it('counts the requests in flight on a provider as they start and end', async () => {
    const inFlight = async () => {
      const result = await run<{ provider: { inFlight: number } }>(subgraph, text(), '{ provider(id: "provider_b") { inFlight } }');
      return result.data!.provider.inFlight;
    };
    const first = registry.acquire('provider_b');
    const second = registry.acquire('provider_b');
    expect(await inFlight()).toBe(2);
    first.release();
    expect(await inFlight()).toBe(1);
    second.release();
    expect(await inFlight()).toBe(0);
  });

  it('resolves references from other subgraphs in one statement, null for unknown ids, live fields included', async () => {
    const slot = registry.acquire('provider_a');
    try {
      statements.length = 0;
      const result = await run(
        subgraph,
        text(),
        `query($representations: [_Any!]!) { _entities(representations: $representations) { ... on Provider { id name inFlight maxConcurrency modelCount } } }`,
        {
          representations: [
            { __typename: 'Provider', id: 'provider_b' },
            { __typename: 'Provider', id: 'nope' },
            { __typename: 'Provider', id: 'provider_a' },
          ],
        },
      );
      expect(result.errors).toBeUndefined();
      expect(result.data!._entities).toEqual([
        { id: 'provider_b', name: 'Provider B', inFlight: 0, maxConcurrency: 2, modelCount: 3 },
        null,
        { id: 'provider_a', name: 'Provider A', inFlight: 1, maxConcurrency: null, modelCount: 1 },
      ]);
      expect(statements.filter((sql) => sql.includes('from "inference"."provider"'))).toHaveLength(1);
    } finally {
      slot.release();
    }
  });
});

describe('probe-driven status', () => {
  it('reaches subscribers: a cooldown makes the provider degraded, stored, with the end of its cooldown', async () => {
    const changes = await statusChanges('provider_a');
    try {
      failThrice('provider_a');
      expect(await changes.first()).toMatchObject({ id: 'provider_a', status: 'DEGRADED', coolingDownUntil: new Date(clock + 30_000).toISOString() });
    } finally {
      await changes.stop();
    }
    const stored = await run(subgraph, text(), '{ provider(id: "provider_a") { status coolingDownUntil } }');
    expect(JSON.parse(JSON.stringify(stored.data!.provider))).toEqual({ status: 'DEGRADED', coolingDownUntil: new Date(clock + 30_000).toISOString() });
  });

  it("replaces an admin's override at the next change the probes see", async () => {
    const set = await run(subgraph, admin(), 'mutation { setProviderStatus(id: "provider_b", status: DOWN) { id status } }');
    expect(set.errors).toBeUndefined();
    expect(set.data!.setProviderStatus).toEqual({ id: 'provider_b', status: 'DOWN' });
    // The registry's own view has not changed, so a probe leaves the override in place...
    await registry.probe();
    await feed.settled();
    expect((await run(subgraph, text(), '{ provider(id: "provider_b") { status } }')).data!.provider).toEqual({ status: 'DOWN' });
    // ...until the provider's probed status changes.
    failThrice('provider_b');
    await feed.settled();
    expect((await run(subgraph, text(), '{ provider(id: "provider_b") { status } }')).data!.provider).toEqual({ status: 'DEGRADED' });
  });

  it('leaves setProviderStatus to admin keys', async () => {
    const result = await run(subgraph, text(), 'mutation { setProviderStatus(id: "provider_a", status: DOWN) { id } }');
    expect(result.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN' });
  });
});

describe('schema', () => {
  it('has migrations that match the entities exactly', async () => {
    expect(await subgraph.orm.schema.getUpdateSchemaSQL({ wrap: false, schema: subgraph.orm.config.get('schema') })).toBe('');
  });
});
