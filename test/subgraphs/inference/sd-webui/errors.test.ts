import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ImageEngineError } from '../../../../subgraphs/inference/engine/image-engine.js';
import { SdWebuiEngine } from '../../../../subgraphs/inference/engines/sd-webui/sd-webui-engine.js';
import { freePort } from '../../../support/free-port.js';
import { LoopbackSdWebuiServer } from '../../../support/loopback-sdwebui-server.js';
import { solid } from './pixels.js';

// Words a WebUI's traceback might carry that must never reach a caller.
const LEAKY = 'CUDA out of memory at /srv/webui/models/secret.safetensors on 10.9.8.7 for prompt "my password"';

const signal = () => new AbortController().signal;

function logSink() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, logger: pino({ level: 'warn' }, stream) };
}

// An ImageEngineError with this reason, whose message names neither the upstream's words nor its address.
async function refused(promise: Promise<unknown>, reason: string, server?: LoopbackSdWebuiServer): Promise<ImageEngineError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ImageEngineError);
  expect((error as ImageEngineError).reason).toBe(reason);
  const message = (error as ImageEngineError).message;
  for (const word of ['/srv/webui', '10.9.8.7', 'password', 'CUDA', '127.0.0.1']) expect(message).not.toContain(word);
  if (server) expect(message).not.toContain(new URL(server.url).port);
  return error as ImageEngineError;
}

describe('WebUI failures become ImageEngineErrors of our wording', () => {
  let server: LoopbackSdWebuiServer;
  let engine: SdWebuiEngine;
  const log = logSink();

  beforeAll(async () => {
    server = await LoopbackSdWebuiServer.start();
    engine = new SdWebuiEngine({ baseUrl: server.url, logger: log.logger, checkpointCacheMs: 0 });
  });
  afterAll(async () => {
    await engine.close();
    await server.close();
  });
  beforeEach(() => {
    server.reset();
    log.lines.length = 0;
  });

  it("maps FastAPI's 422 to invalid_request naming the field from its loc", async () => {
    const error = await refused(engine.txt2img({ prompt: 'x', steps: 2.5 }, signal()), 'invalid_request', server);
    expect(error.param).toBe('steps');
    expect(error.message).toBe('The image engine refused the parameter steps');
  });

  it("maps the WebUI's 404 'Sampler not found' to invalid_request on sampler_name", async () => {
    const error = await refused(engine.txt2img({ prompt: 'x', sampler_name: 'Imaginary++' }, signal()), 'invalid_request', server);
    expect(error.param).toBe('sampler_name');
  });

  it("maps the WebUI's 500 'Invalid encoded image' to invalid_request on the image field", async () => {
    const error = await refused(engine.img2img({ prompt: 'x', init_images: ['bm90IGFuIGltYWdl'] }, signal()), 'invalid_request', server);
    expect(error.param).toBe('init_images');
    const upscale = await refused(engine.upscale({ image: 'bm90IGFuIGltYWdl', upscaler_1: 'ESRGAN_4x' }, signal()), 'invalid_request', server);
    expect(upscale.param).toBe('image');
  });

  it("maps the WebUI's assertion on an unknown upscaler to not_available naming it", async () => {
    const error = await refused(engine.upscale({ image: await solid(4, 4), upscaler_1: '4x-UltraSharp' }, signal()), 'not_available', server);
    expect([error.param, error.message]).toEqual(['upscaler_1', 'No upscaler "4x-UltraSharp" on the image engine']);
  });

  it('answers a WebUI failure with our words and logs the WebUI’s own', async () => {
    server.behaviour.fail = { status: 500, body: { error: 'OutOfMemoryError', detail: '', body: '', errors: LEAKY } };
    const error = await refused(engine.txt2img({ prompt: 'x' }, signal()), 'upstream_error', server);
    expect(error.message).toBe('The image engine failed');
    expect(log.lines.join('')).toContain('CUDA out of memory');
  });

  it.each([
    [503, 'unavailable'],
    [429, 'unavailable'],
    [401, 'upstream_error'],
    [504, 'timeout'],
    [404, 'upstream_error'],
  ])('maps status %i to %s', async (status, reason) => {
    server.behaviour.fail = { status, body: { error: 'HTTPException', detail: LEAKY, body: '', errors: LEAKY } };
    await refused(engine.txt2img({ prompt: 'x' }, signal()), reason, server);
  });

  it('maps an answer in an unknown shape to upstream_error', async () => {
    server.behaviour.failListings = { status: 200, body: { models: 'not a list' } };
    await refused(engine.samplers(), 'upstream_error', server);
    server.behaviour.failListings = { status: 200, body: [{ title: 42 }] };
    await refused(engine.checkpoints(), 'upstream_error', server);
  });

  it('maps a connection reset before the answer to unavailable', async () => {
    server.behaviour.dropConnection = true;
    await refused(engine.txt2img({ prompt: 'x' }, signal()), 'unavailable', server);
  });

  it('maps an upstream nobody listens on to unavailable, in health too', async () => {
    const port = await freePort();
    const down = new SdWebuiEngine({ baseUrl: `http://127.0.0.1:${port}` });
    await refused(down.txt2img({ prompt: 'x' }, signal()), 'unavailable');
    await refused(down.models(), 'unavailable');
    expect(await down.health()).toEqual({ ok: false, detail: 'The image engine cannot be reached' });
    await down.close();
  });
});
