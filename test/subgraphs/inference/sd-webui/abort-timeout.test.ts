import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ImageEngineError } from '../../../../subgraphs/inference/engine/image-engine.js';
import { SdWebuiEngine } from '../../../../subgraphs/inference/engines/sd-webui/sd-webui-engine.js';
import { LoopbackSdWebuiServer } from '../../../support/loopback-sdwebui-server.js';

// Long enough that only an abort, a timeout or the test ends a job.
const LONG_JOB_MS = 60_000;

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (caught: unknown) => caught,
  );
}

function taskIdOf(server: LoopbackSdWebuiServer, index: number): string {
  return (server.to('/sdapi/v1/txt2img')[index].body as { force_task_id: string }).force_task_id;
}

describe('abandoned and slow generations', () => {
  let server: LoopbackSdWebuiServer;
  let engine: SdWebuiEngine;

  beforeAll(async () => {
    server = await LoopbackSdWebuiServer.start();
    engine = new SdWebuiEngine({ baseUrl: server.url, timeouts: { generationMs: 10_000, listingMs: 5_000 }, abandonedPollMs: 10 });
  });
  afterAll(async () => {
    await engine.close();
    await server.close();
  });
  beforeEach(() => {
    server.finishActive();
    server.reset();
  });

  it("closes the request and interrupts the WebUI's job when the caller's signal aborts", async () => {
    server.behaviour.jobMs = LONG_JOB_MS;
    const controller = new AbortController();
    const run = failure(engine.txt2img({ prompt: 'slow', width: 64, height: 64 }, controller.signal));
    await server.until(() => server.active !== undefined);
    const reason = new Error('client went away');
    controller.abort(reason);
    expect(await run).toBe(reason);
    await server.until(() => server.interrupts === 1 && server.to('/sdapi/v1/txt2img')[0].closedEarly);
    // The interrupt ended the job: the WebUI is free for the next caller.
    await server.until(() => server.active === undefined);
    expect(server.completed.has(taskIdOf(server, 0))).toBe(true);
  });

  it('times out a generation past generationMs, and interrupts its job', async () => {
    const quick = new SdWebuiEngine({ baseUrl: server.url, timeouts: { generationMs: 150 }, abandonedPollMs: 10 });
    server.behaviour.jobMs = LONG_JOB_MS;
    const error = await failure(quick.txt2img({ prompt: 'slow' }, new AbortController().signal));
    expect(error).toBeInstanceOf(ImageEngineError);
    expect([(error as ImageEngineError).reason, (error as ImageEngineError).message]).toEqual(['timeout', 'The image engine did not answer in time']);
    await server.until(() => server.interrupts === 1);
    expect(server.to('/sdapi/v1/txt2img')[0].closedEarly).toBe(true);
    await quick.close();
  });

  it('times out a listing past listingMs', async () => {
    const quick = new SdWebuiEngine({ baseUrl: server.url, timeouts: { listingMs: 100 } });
    server.behaviour.listingDelayMs = 2_000;
    const error = await failure(quick.samplers());
    expect((error as ImageEngineError).reason).toBe('timeout');
    await quick.close();
  });

  it("waits for an abandoned job queued behind another caller's before interrupting it", async () => {
    server.behaviour.jobMs = LONG_JOB_MS;
    const first = engine.txt2img({ prompt: 'first', width: 64, height: 64 }, new AbortController().signal);
    await server.until(() => server.active !== undefined);
    const controller = new AbortController();
    const second = failure(engine.txt2img({ prompt: 'second', width: 64, height: 64 }, controller.signal));
    await server.until(() => server.queued.length === 1);
    const secondTask = taskIdOf(server, 1);
    controller.abort(new Error('gone'));
    await second;
    // The engine has looked twice and seen the job queued: interrupting now would stop the first caller's job.
    await server.until(() => server.requests.filter((request) => request.path === '/internal/progress' && (request.body as { id_task: string }).id_task === secondTask).length >= 2);
    expect(server.interrupts).toBe(0);
    server.finishActive();
    const answer = await first;
    expect(answer.images).toHaveLength(1);
    // Once the abandoned job runs, it is interrupted.
    await server.until(() => server.interrupts === 1 && server.completed.has(secondTask));
  });

  it("does not interrupt another caller's job for a request the WebUI never registered", async () => {
    server.behaviour.jobMs = LONG_JOB_MS;
    const other = engine.txt2img({ prompt: 'other', width: 64, height: 64 }, new AbortController().signal);
    await server.until(() => server.active !== undefined);
    const quick = new SdWebuiEngine({ baseUrl: server.url, abandonedPollMs: 5, abandonedGraceMs: 60_000 });
    const controller = new AbortController();
    controller.abort(new Error('gone before sending'));
    await failure(quick.txt2img({ prompt: 'never sent' }, controller.signal));
    // Looked for, twice, and not found: the job running is someone else's.
    await server.until(() => server.to('/internal/progress').length >= 2);
    await quick.close();
    expect(server.interrupts).toBe(0);
    expect(server.to('/sdapi/v1/txt2img')).toHaveLength(1);
    server.finishActive();
    expect((await other).images).toHaveLength(1);
  });

  it('interrupts at once a WebUI that cannot say where a job is', async () => {
    server.behaviour.jobMs = LONG_JOB_MS;
    server.behaviour.noTaskProgress = true;
    const controller = new AbortController();
    const run = failure(engine.txt2img({ prompt: 'slow' }, controller.signal));
    await server.until(() => server.active !== undefined);
    controller.abort(new Error('gone'));
    await run;
    await server.until(() => server.interrupts === 1 && server.active === undefined);
  });

  it('leaves parallel requests to queue at the WebUI, one job at a time, each answered', async () => {
    server.behaviour.jobMs = LONG_JOB_MS;
    const runs = [1, 2, 3].map((seed) => engine.txt2img({ prompt: `p${seed}`, width: 64, height: 64, seed }, new AbortController().signal));
    await server.until(() => server.active !== undefined && server.queued.length === 2);
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      await server.until(() => server.active !== undefined && !order.includes(server.active.taskId));
      order.push(server.active!.taskId);
      server.finishActive();
    }
    expect(order).toEqual([0, 1, 2].map((index) => taskIdOf(server, index)));
    const answers = await Promise.all(runs);
    expect(answers.map((answer) => (JSON.parse(answer.info) as { seed: number }).seed)).toEqual([1, 2, 3]);
    expect(server.interrupts).toBe(0);
  });

  it('refuses in-flight requests as unavailable when the engine closes', async () => {
    const closing = new SdWebuiEngine({ baseUrl: server.url });
    server.behaviour.jobMs = LONG_JOB_MS;
    const run = failure(closing.txt2img({ prompt: 'slow' }, new AbortController().signal));
    await server.until(() => server.active !== undefined);
    await closing.close();
    const error = await run;
    expect((error as ImageEngineError).reason).toBe('unavailable');
  });
});
