import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImageEngineError } from '../../../../subgraphs/inference/engine/image-engine.js';
import { CombinedImageEngine } from '../../../../subgraphs/inference/engines/upscale/combined-image-engine.js';
import { EnginePool } from '../../../../subgraphs/inference/provider-registry/engine-pool.js';
import { LoopbackSdWebuiServer } from '../../../support/loopback-sdwebui-server.js';

describe('the engine pool with an sd-webui entry', () => {
  let server: LoopbackSdWebuiServer;
  const pool = new EnginePool();

  beforeAll(async () => {
    server = await LoopbackSdWebuiServer.start();
  });
  afterAll(async () => {
    await pool.close();
    await server.close();
  });

  it('serves the entry as an image engine (the upstream with the embedded upscalers) and no text engine', async () => {
    const pooled = pool.get({ type: 'sd-webui', url: server.url, timeouts: { generationMs: 5_000, listingMs: 1_000 } });
    expect(pooled.engine).toBeNull();
    expect(pooled.imageEngine).toBeInstanceOf(CombinedImageEngine);
    const answer = await pooled.imageEngine!.txt2img({ prompt: 'x', width: 64, height: 64 }, new AbortController().signal);
    expect(answer.images).toHaveLength(1);
    // The same entry in another key order is the same engine.
    expect(pool.get({ url: server.url, timeouts: { listingMs: 1_000, generationMs: 5_000 }, type: 'sd-webui' }).imageEngine).toBe(pooled.imageEngine);
    expect(pool.runningImage()).toEqual([pooled.imageEngine]);
    expect(pool.running()).toEqual([]);
  });

  it("takes the entry's timeouts", async () => {
    const pooled = pool.get({ type: 'sd-webui', url: server.url, timeouts: { generationMs: 100, listingMs: 1_000 } });
    server.behaviour.jobMs = 60_000;
    const error = await pooled.imageEngine!.txt2img({ prompt: 'slow' }, new AbortController().signal).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect((error as ImageEngineError).reason).toBe('timeout');
    await server.until(() => server.interrupts === 1);
    server.behaviour.jobMs = 0;
  });

  it('closes the image engines with the pool', async () => {
    const engine = pool.runningImage()[0];
    await pool.close();
    const error = await engine.txt2img({ prompt: 'x' }, new AbortController().signal).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect((error as ImageEngineError).reason).toBe('unavailable');
  });
});
