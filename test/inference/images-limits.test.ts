import pg from 'pg';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inferenceConfigFrom } from '../../subgraphs/inference/config/load-inference-config.js';
import { LoopbackSdWebuiServer } from '../support/loopback-sdwebui-server.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';
import { waitFor } from './inference-test-kit.js';

/**
 * The limits of the image paths, seen through the interfaces over a loopback Stable-Diffusion-WebUI
 * (provider_d's engine): a client that goes away mid-generation, Service I's six parallel requests
 * per key and the proxy's six per client address, a provider's maxConcurrency, the usage record of
 * an image call, and the image timeouts (the engine's own and the platform's imageGenerationMs).
 *
 * Requests are held by a long jobMs: the loopback runs one job at a time, the rest wait in its
 * queue, each recorded once its body is read. Everything waits on conditions (the loopback's
 * until(...), polls with a deadline), never on sleeps.
 *
 * What the code counts (openai.routes.ts: one CallerSlots per interface, subject `key:<id>` or
 * `ip:<address>`): Service I's six are per key, and its text routes take a text key while its image
 * routes take an image key, so text and image requests never share a key's six: an account's text
 * key and image key have six each. The proxy's six are per client address, text and image together.
 */

const LONG_JOB_MS = 120_000;
const PROVIDERS_WITHOUT_IMAGES = [
  { id: 'provider_a', name: 'Provider A', engines: [{ type: 'ocr' }] },
  { id: 'provider_b', name: 'Provider B', engines: [{ type: 'ocr' }] },
];

interface Answer {
  status: number;
  retryAfter: string | null;
  body: { error?: { code: string; message: string }; images?: string[]; data?: unknown[] };
}

async function answerOf(response: Response): Promise<Answer> {
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as Answer['body'] };
}

/** Resolves when `promise` does, or fails naming `what` after `ms`. */
async function within<T>(promise: Promise<T>, what: string, ms = 15_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms waiting for ${what}`)), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Ends the running job and every queued one at once, and waits until the loopback is idle. */
async function drain(webui: LoopbackSdWebuiServer): Promise<void> {
  webui.behaviour.jobMs = 0;
  webui.finishActive();
  await within(
    webui.until(() => !webui.active && webui.queued.length === 0),
    'the loopback to be idle',
  );
}

const TINY = { prompt: 'a small test image', width: 64, height: 64 };
const agents: Agent[] = [];

/** fetch from another loopback address: another client address to the edge. */
function fetchFrom(localAddress: string): typeof fetch {
  const agent = new Agent({ localAddress });
  agents.push(agent);
  return ((url: string, init: RequestInit = {}) => undiciFetch(url, { ...(init as object), dispatcher: agent } as never)) as unknown as typeof fetch;
}

afterAll(async () => {
  await Promise.all(agents.map((agent) => agent.close()));
});

describe('provider_d over a loopback WebUI: client disconnects, parallel limits, usage', () => {
  let platform: TestPlatform;
  let webui: LoopbackSdWebuiServer;
  let db: pg.Client;
  let imageKey: string;
  let otherImageKey: string;
  let textKey: string;
  const pending: Promise<unknown>[] = [];

  beforeAll(async () => {
    webui = await LoopbackSdWebuiServer.start();
    const config = inferenceConfigFrom(
      {
        providers: [
          ...PROVIDERS_WITHOUT_IMAGES,
          { id: 'provider_c', name: 'Provider C', engines: [{ type: 'ocr' }] },
          { id: 'provider_d', name: 'Provider D', engines: [{ type: 'ocr' }, { type: 'sd-webui', url: webui.url }] },
        ],
      },
      null,
    );
    platform = await startTestPlatform({ inference: config });
    imageKey = await platform.issueKey('acme', 'image');
    otherImageKey = await platform.issueKey('acme', 'image');
    textKey = await platform.issueKey('acme', 'text');
    db = new pg.Client({ connectionString: platform.databaseUrl });
    await db.connect();
  }, 60_000);

  afterEach(async () => {
    await drain(webui);
    await Promise.all(pending.splice(0));
    // No request may keep a slot into the next test.
    await waitFor('provider_d idle', async () => {
      const status = (await (await platform.request('/inference/gateway/v1/status')).json()) as { data: { id: string; in_flight: number }[] };
      return status.data.find((p) => p.id === 'provider_d')?.in_flight === 0;
    });
    webui.reset();
  });

  afterAll(async () => {
    await db?.end();
    await platform?.close();
    await webui?.close();
  });

  const post = (path: string, json: unknown, init: { key?: string; signal?: AbortSignal } = {}) => platform.request(path, { method: 'POST', json, ...init });

  /** Sends `count` txt2img requests that the loopback holds, and waits until it has read them all. */
  async function hold(count: number, send: () => Promise<Response>): Promise<Promise<Answer>[]> {
    webui.behaviour.jobMs = LONG_JOB_MS;
    const before = webui.to('/sdapi/v1/txt2img').length;
    const held = Array.from({ length: count }, () => send().then(answerOf));
    pending.push(...held.map((p) => p.catch(() => undefined)));
    await within(
      webui.until(() => webui.to('/sdapi/v1/txt2img').length === before + count),
      `${count} held txt2img requests at the loopback`,
    );
    return held;
  }

  it('a client that goes away mid-txt2img: the upstream request is closed early, the WebUI job interrupted, the slots freed and the call recorded as 499', async () => {
    webui.behaviour.jobMs = LONG_JOB_MS;
    const controller = new AbortController();
    const request = post('/inference/image/v1/txt2img', { ...TINY, sd_model_checkpoint: 'sd_xl_base_1.0' }, { key: imageKey, signal: controller.signal }).catch((error: unknown) => error);
    await within(
      webui.until(() => webui.active?.route === 'scripts_txt2img'),
      'the generation to run upstream',
    );
    const job = webui.active!;
    controller.abort();
    expect(((await request) as Error).name).toBe('AbortError');
    await within(
      webui.until(() => webui.to('/sdapi/v1/txt2img').at(-1)!.closedEarly && webui.interrupts === 1),
      'the upstream request closed early and the WebUI interrupted',
    );
    // The interrupt reached the abandoned job itself (the loopback only stops an interruptible active job).
    expect(job.interrupted).toBe(true);
    expect(webui.active).toBeUndefined();
    // The key's parallel slot is back: this listing is the only request of the key in flight.
    const parallel = await waitFor('the slot of the abandoned request freed', async () => {
      const body = (await (await platform.request('/inference/image/v1/parallel-requests', { key: imageKey })).json()) as {
        in_use: number;
        providers: { id: string; in_flight: number }[];
      };
      return body.in_use === 1 && body.providers.find((p) => p.id === 'provider_d')?.in_flight === 0 && body;
    });
    expect(parallel.in_use).toBe(1);
    const row = await waitFor('the usage row of the abandoned call', async () => (await db.query(`select * from inference.usage_record where interface = 'service_i' and status = 499`)).rows[0]);
    expect(row).toMatchObject({ provider: 'provider_d', model: 'sd_xl_base_1.0', error_code: 'client_closed' });
  });

  it('Service I: six parallel image requests of one image key are accepted, the seventh is 429 too_many_parallel_requests with Retry-After', async () => {
    const held = await hold(6, () => post('/inference/image/v1/txt2img', TINY, { key: imageKey }));
    const seventh = await answerOf(await post('/inference/image/v1/txt2img', TINY, { key: imageKey }));
    expect(seventh.status).toBe(429);
    expect(seventh.body.error?.code).toBe('too_many_parallel_requests');
    expect(seventh.retryAfter).toBe('1');
    // Every image endpoint of the key counts, listings included; the refusals reached no upstream.
    const listing = await platform.request('/inference/image/v1/parallel-requests', { key: imageKey });
    expect(listing.status).toBe(429);
    await listing.body?.cancel();
    expect(webui.to('/sdapi/v1/txt2img')).toHaveLength(6);
    // Another image key of the same account has its own six.
    const other = (await (await platform.request('/inference/image/v1/parallel-requests', { key: otherImageKey })).json()) as { limit: number; in_use: number };
    expect(other).toMatchObject({ limit: 6, in_use: 1 });
    // Text routes of Service I take a text key, a key of its own: the image key's six do not touch it.
    const models = await platform.request('/inference/image/v1/models', { key: textKey });
    expect(models.status).toBe(200);
    await models.body?.cancel();
    // And an image key is no key for the text routes at all.
    const wrongKind = await platform.request('/inference/image/v1/models', { key: imageKey });
    expect(wrongKind.status).toBe(403);
    await wrongKind.body?.cancel();

    await drain(webui);
    for (const answer of await Promise.all(held)) expect(answer.status).toBe(200);
    // All six slots are back.
    const again = await hold(6, () => post('/inference/image/v1/txt2img', TINY, { key: imageKey }));
    expect((await answerOf(await post('/inference/image/v1/txt2img', TINY, { key: imageKey }))).status).toBe(429);
    await drain(webui);
    for (const answer of await Promise.all(again)) expect(answer.status).toBe(200);
  });

  it('the proxy: six parallel requests per client address, the seventh from that address is 429, another address is served', async () => {
    const held = await hold(6, () => post('/inference/proxy/api/txt2img', TINY));
    const seventh = await answerOf(await post('/inference/proxy/api/txt2img', TINY));
    expect(seventh.status).toBe(429);
    expect(seventh.body.error?.code).toBe('too_many_parallel_requests');
    expect(seventh.body.error?.message).toMatch(/client address/);
    expect(seventh.retryAfter).toBe('1');
    // Text and image requests of one address count together on the proxy.
    const text = await post('/inference/proxy/v1/chat/completions', { model: 'x', messages: [{ role: 'user', content: 'hi' }] });
    expect(text.status).toBe(429);
    await text.body?.cancel();

    const fromElsewhere = fetchFrom('127.0.0.2');
    const listed = await fromElsewhere(`${platform.baseUrl}/inference/proxy/api/sd-models`);
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual(['v1-5-pruned-emaonly', 'sd_xl_base_1.0']);
    const elsewhere = fromElsewhere(`${platform.baseUrl}/inference/proxy/api/txt2img`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(TINY) }).then(answerOf);
    pending.push(elsewhere.catch(() => undefined));
    await within(
      webui.until(() => webui.to('/sdapi/v1/txt2img').length === 7),
      'the other address’s request at the loopback',
    );

    await drain(webui);
    for (const answer of await Promise.all([...held, elsewhere])) expect(answer.status).toBe(200);
  });

  it('records an image call: interface, provider_d, the checkpoint as model, status 200, the images returned', async () => {
    const gateway = await post('/inference/gateway/v1/images/generations', { prompt: 'a usage row', size: '64x64', provider: 'provider_d', model: 'sd_xl_base_1.0', n: 2 });
    expect(gateway.status).toBe(200);
    await gateway.body?.cancel();
    const serviceI = await post('/inference/image/v1/txt2img', { ...TINY, sd_model_checkpoint: 'v1-5-pruned-emaonly' }, { key: imageKey });
    expect(serviceI.status).toBe(200);
    await serviceI.body?.cancel();

    const rowOf = (where: string) => waitFor(`the usage row where ${where}`, async () => (await db.query(`select * from inference.usage_record where ${where}`)).rows[0] as Record<string, unknown> | undefined);
    const fromGateway = await rowOf(`interface = 'gateway' and model = 'sd_xl_base_1.0'`);
    expect(fromGateway).toMatchObject({ provider: 'provider_d', model: 'sd_xl_base_1.0', status: 200, error_code: null, key_id: null, prompt_tokens: 0, completion_tokens: 0, images: 2 });
    expect(fromGateway.client_address).toBeTruthy();
    const fromServiceI = await rowOf(`interface = 'service_i' and model = 'v1-5-pruned-emaonly' and status = 200`);
    expect(fromServiceI).toMatchObject({ provider: 'provider_d', status: 200, client_address: null, images: 1 });
    expect(fromServiceI.key_id).toBeTruthy();
  });

  it('records the checkpoint the WebUI used when the request names none', async () => {
    webui.currentCheckpoint = 'sd_xl_base_1.0.safetensors [31e35c80fc]';
    const proxied = await post('/inference/proxy/api/txt2img', TINY);
    expect(proxied.status).toBe(200);
    await proxied.body?.cancel();
    const row = await waitFor('the usage row of the proxy call', async () => (await db.query(`select * from inference.usage_record where interface = 'proxy' and model = 'sd_xl_base_1.0'`)).rows[0] as Record<string, unknown> | undefined);
    expect(row).toMatchObject({ provider: 'provider_d', status: 200 });
    // No successful generation went unnamed (the earlier tests' ran on the WebUI's default checkpoint).
    expect((await db.query(`select count(*)::int as n from inference.usage_record where status = 200 and model = ''`)).rows[0]).toEqual({ n: 0 });
  });
});

describe('provider_d with maxConcurrency 2, provider_c with an sd-webui engine timing out at 500 ms', () => {
  let platform: TestPlatform;
  let webui: LoopbackSdWebuiServer;
  let imageKey: string;

  beforeAll(async () => {
    webui = await LoopbackSdWebuiServer.start();
    const config = inferenceConfigFrom(
      {
        providers: [
          ...PROVIDERS_WITHOUT_IMAGES,
          { id: 'provider_c', name: 'Provider C', engines: [{ type: 'ocr' }, { type: 'sd-webui', url: webui.url, timeouts: { generationMs: 500 } }] },
          { id: 'provider_d', name: 'Provider D', engines: [{ type: 'ocr' }, { type: 'sd-webui', url: webui.url }], maxConcurrency: 2 },
        ],
      },
      null,
    );
    platform = await startTestPlatform({ inference: config });
    imageKey = await platform.issueKey('acme', 'image');
  }, 60_000);

  afterEach(async () => {
    await drain(webui);
    webui.reset();
  });

  afterAll(async () => {
    await platform?.close();
    await webui?.close();
  });

  const generate = (provider: string) => platform.request('/inference/gateway/v1/images/generations', { method: 'POST', json: { prompt: 'x', size: '64x64', provider } });

  it('refuses a third image generation on provider_d at once with 429 provider_busy and Retry-After', async () => {
    webui.behaviour.jobMs = LONG_JOB_MS;
    const held = [generate('provider_d').then(answerOf), generate('provider_d').then(answerOf)];
    await within(
      webui.until(() => webui.to('/sdapi/v1/txt2img').length === 2),
      'two generations at the loopback',
    );
    const third = await answerOf(await generate('provider_d'));
    expect(third.status).toBe(429);
    expect(third.body.error?.code).toBe('provider_busy');
    expect(third.retryAfter).toBe('1');
    // Service I generates on provider_d too: refused the same way, though its key has six.
    const serviceI = await answerOf(await platform.request('/inference/image/v1/txt2img', { method: 'POST', json: TINY, key: imageKey }));
    expect(serviceI.status).toBe(429);
    expect(serviceI.body.error?.code).toBe('provider_busy');
    expect(webui.to('/sdapi/v1/txt2img')).toHaveLength(2);

    await drain(webui);
    for (const answer of await Promise.all(held)) expect(answer.status).toBe(200);
    expect((await answerOf(await generate('provider_d'))).status).toBe(200);
  });

  it("the engine's own generation timeout: 503 timeout, and the job is interrupted upstream", async () => {
    webui.behaviour.jobMs = LONG_JOB_MS;
    const answer = await answerOf(await generate('provider_c'));
    expect(answer.status).toBe(503);
    expect(answer.body.error?.code).toBe('timeout');
    expect(answer.retryAfter).toBe('5');
    await within(
      webui.until(() => webui.interrupts === 1 && webui.to('/sdapi/v1/txt2img').at(-1)!.closedEarly),
      'the timed-out job interrupted',
    );
  });
});

describe("timeouts.imageGenerationMs 500: provider_d's engine given a minute of its own, provider_c's deriving 500 from it", () => {
  let platform: TestPlatform;
  let webui: LoopbackSdWebuiServer;

  beforeAll(async () => {
    webui = await LoopbackSdWebuiServer.start();
    const config = inferenceConfigFrom(
      {
        timeouts: { imageGenerationMs: 500 },
        providers: [
          ...PROVIDERS_WITHOUT_IMAGES,
          // The default configuration's shape: the engine's timeout is imageGenerationMs, both timers run out together.
          { id: 'provider_c', name: 'Provider C', engines: [{ type: 'ocr' }, { type: 'sd-webui', url: webui.url }] },
          { id: 'provider_d', name: 'Provider D', engines: [{ type: 'ocr' }, { type: 'sd-webui', url: webui.url, timeouts: { generationMs: 60_000 } }] },
        ],
      },
      null,
    );
    platform = await startTestPlatform({ inference: config });
  }, 60_000);

  afterEach(async () => {
    await drain(webui);
    webui.reset();
  });

  afterAll(async () => {
    await platform?.close();
    await webui?.close();
  });

  it('answers a generation over the limit with 503 timeout, and the job is interrupted upstream', async () => {
    webui.behaviour.jobMs = LONG_JOB_MS;
    const answer = await answerOf(await platform.request('/inference/proxy/api/txt2img', { method: 'POST', json: TINY }));
    expect(answer.status).toBe(503);
    expect(answer.body.error?.code).toBe('timeout');
    expect(answer.retryAfter).toBe('5');
    await within(
      webui.until(() => webui.interrupts === 1),
      'the timed-out job interrupted',
    );
  });

  it('answers 503 timeout where the engine and the platform give up at the same moment', async () => {
    webui.behaviour.jobMs = LONG_JOB_MS;
    const answer = await answerOf(await platform.request('/inference/gateway/v1/images/generations', { method: 'POST', json: { prompt: 'x', size: '64x64', provider: 'provider_c' } }));
    expect(answer.status).toBe(503);
    expect(answer.body.error?.code).toBe('timeout');
    await within(
      webui.until(() => webui.interrupts === 1),
      'the timed-out job interrupted',
    );
  });
});
