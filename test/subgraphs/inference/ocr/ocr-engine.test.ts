import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError, type ChatMessage, type GenerationEvent, type GenerationRequest } from '../../../../subgraphs/inference/engine/text-engine.js';
import { OCR_MODEL_ID, OcrEngine } from '../../../../subgraphs/inference/engines/ocr/ocr-engine.js';
import { dataUri, encodeBmp, encodePng, renderText } from './text-image.js';

const FOX = encodePng(renderText(['HELLO WORLD', 'QUICK BROWN FOX JUMPS']));
const TAXIS = encodePng(renderText(['SEVEN TAXIS']));

function chat(messages: ChatMessage[], extra: Partial<GenerationRequest> = {}): GenerationRequest {
  return { model: OCR_MODEL_ID, input: { kind: 'chat', messages }, sampling: {}, signal: new AbortController().signal, ...extra };
}

function imageMessage(...urls: string[]): ChatMessage {
  return { role: 'user', content: [{ type: 'text', text: 'What does this say?' }, ...urls.map((url) => ({ type: 'image_url' as const, image_url: { url } }))] };
}

async function collect(engine: OcrEngine, request: GenerationRequest) {
  const events: GenerationEvent[] = [];
  for await (const event of engine.generate(request)) events.push(event);
  const done = events.at(-1);
  if (done?.type !== 'done') throw new Error('the stream did not end with done');
  const deltas = events.slice(0, -1);
  expect(deltas.every((e) => e.type === 'delta')).toBe(true);
  const text = deltas.map((e) => (e.type === 'delta' ? e.text : '')).join('');
  const ocr = done.extensions?.ocr as { confidence: number; images: { format: string; bytes: number; confidence: number }[] };
  return { text, done, deltas, ocr };
}

async function refusal(promise: Promise<unknown>): Promise<EngineError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EngineError);
  return error as EngineError;
}

const words = (text: string) => text.split(/\s+/).filter(Boolean);

const engine = new OcrEngine();
afterAll(() => engine.close());

describe('reading text from images', () => {
  it('answers a chat with the text of the image in the last user message, with its confidence', async () => {
    const { text, done, deltas, ocr } = await collect(engine, chat([imageMessage(dataUri(FOX))]));
    expect(words(text)).toEqual(['HELLO', 'WORLD', 'QUICK', 'BROWN', 'FOX', 'JUMPS']);
    expect(deltas.length).toBeGreaterThan(0);
    expect(done).toMatchObject({ finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 6 } });
    expect(ocr.confidence).toBeGreaterThan(60);
    expect(ocr.confidence).toBeLessThanOrEqual(100);
    expect(ocr.images).toEqual([{ format: 'png', bytes: FOX.length, confidence: ocr.confidence }]);
  });

  it('knows a BMP by its bytes although the data URI calls it a PNG', async () => {
    const bmp = encodeBmp(renderText(['SEVEN TAXIS']));
    const { text, ocr } = await collect(engine, chat([imageMessage(dataUri(bmp, 'image/png'))]));
    expect(words(text)).toEqual(['SEVEN', 'TAXIS']);
    expect(ocr.images[0].format).toBe('bmp');
  });

  it('reads every image of the last user message in order, and none of the earlier messages', async () => {
    const earlier = encodePng(renderText(['PAID']));
    const { text, deltas, ocr } = await collect(
      engine,
      chat([imageMessage(dataUri(earlier)), { role: 'assistant', content: 'PAID' }, imageMessage(dataUri(TAXIS), dataUri(FOX))]),
    );
    expect(words(text)).toEqual(['SEVEN', 'TAXIS', 'HELLO', 'WORLD', 'QUICK', 'BROWN', 'FOX', 'JUMPS']);
    expect(text).toContain('TAXIS\n\nHELLO');
    expect(deltas).toHaveLength(2);
    expect(ocr.images).toHaveLength(2);
    expect(ocr.confidence).toBeCloseTo((ocr.images[0].confidence + ocr.images[1].confidence) / 2);
  });

  it('answers an image without text with nothing for it, not a guess', async () => {
    const blank = encodePng(renderText(['     ']));
    const { text, deltas, ocr, done } = await collect(engine, chat([imageMessage(dataUri(blank), dataUri(TAXIS))]));
    expect(text).toBe('\n\nSEVEN TAXIS');
    expect(deltas).toEqual([{ type: 'delta', text: '\n\nSEVEN TAXIS' }]);
    expect(ocr.images[0].confidence).toBe(0);
    expect(done).toMatchObject({ usage: { completionTokens: 2 } });
  });

  it('honours max_tokens as recognised words, and stop sequences', async () => {
    const capped = await collect(engine, chat([imageMessage(dataUri(FOX))], { sampling: { maxTokens: 3 } }));
    expect(words(capped.text)).toEqual(['HELLO', 'WORLD', 'QUICK']);
    expect(capped.done).toMatchObject({ finishReason: 'length', usage: { completionTokens: 3 } });

    const stopped = await collect(engine, chat([imageMessage(dataUri(FOX))], { sampling: { stop: ['FOX', 'ZEBRA'] } }));
    expect(words(stopped.text)).toEqual(['HELLO', 'WORLD', 'QUICK', 'BROWN']);
    expect(stopped.done).toMatchObject({ finishReason: 'stop', usage: { completionTokens: 4 } });
  });

  it('finds a stop sequence that spans two images without sending any of it', async () => {
    const { text, done } = await collect(engine, chat([imageMessage(dataUri(TAXIS), dataUri(FOX))], { sampling: { stop: ['TAXIS\n\nHELLO'] } }));
    expect(text).toBe('SEVEN ');
    expect(done).toMatchObject({ finishReason: 'stop' });
  });

  it('stops at once when the request is aborted, and reads the next request with a fresh worker', async () => {
    const controller = new AbortController();
    const pending = collect(engine, chat([imageMessage(dataUri(FOX))], { signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('client went away')), 20);
    await expect(pending).rejects.toThrow('client went away');
    const { text } = await collect(engine, chat([imageMessage(dataUri(TAXIS))]));
    expect(words(text)).toEqual(['SEVEN', 'TAXIS']);
  });

  it('queues requests beyond its workers, and drops a queued one that is aborted without harm', async () => {
    const controller = new AbortController();
    const first = collect(engine, chat([imageMessage(dataUri(FOX))]));
    const queued = collect(engine, chat([imageMessage(dataUri(FOX))], { signal: controller.signal }));
    const last = collect(engine, chat([imageMessage(dataUri(TAXIS))]));
    // The first is being read by the only worker by now, so the second waits in the queue.
    await new Promise((resolve) => setTimeout(resolve, 30));
    controller.abort(new Error('gave up waiting'));
    await expect(queued).rejects.toThrow('gave up waiting');
    expect(words((await first).text)).toEqual(['HELLO', 'WORLD', 'QUICK', 'BROWN', 'FOX', 'JUMPS']);
    expect(words((await last).text)).toEqual(['SEVEN', 'TAXIS']);
  });

  it('lists one ready vision model that takes image URLs', async () => {
    expect(await engine.models()).toEqual([{ id: 'ocr-eng', contextLength: 0, inputModalities: ['text', 'image'], urlImageInput: true, status: 'ready' }]);
    expect(await engine.health()).toEqual({ ok: true, detail: 'model loaded' });
  });
});

describe('what an OCR model refuses', () => {
  it('refuses a chat without an image instead of inventing an answer', async () => {
    const error = await refusal(collect(engine, chat([{ role: 'user', content: 'Hello, how are you?' }])));
    expect(error).toMatchObject({ reason: 'invalid_request', param: 'messages' });
    expect(error.message).toMatch(/cannot chat/);
    // An image in an earlier message does not count: only the last user message is read.
    const earlier = await refusal(collect(engine, chat([imageMessage(dataUri(TAXIS)), { role: 'user', content: 'And now?' }])));
    expect(earlier).toMatchObject({ reason: 'invalid_request', param: 'messages' });
  });

  it('refuses a completion, token counting, an unknown model and sampling it cannot honour', async () => {
    const completion = await refusal(collect(engine, { model: OCR_MODEL_ID, input: { kind: 'completion', prompt: 'Once upon' }, sampling: {}, signal: new AbortController().signal }));
    expect(completion).toMatchObject({ reason: 'invalid_request', param: 'prompt' });

    const tokenize = await refusal(engine.tokenize(OCR_MODEL_ID, { kind: 'chat', messages: [imageMessage(dataUri(TAXIS))] }));
    expect(tokenize).toMatchObject({ reason: 'invalid_request', param: 'model' });
    expect(tokenize.message).toMatch(/no tokenizer/);

    const unknown = await refusal(collect(engine, { ...chat([imageMessage(dataUri(TAXIS))]), model: 'llama-3' }));
    expect(unknown).toMatchObject({ reason: 'model_not_found', param: 'model' });

    const temperature = await refusal(collect(engine, chat([imageMessage(dataUri(TAXIS))], { sampling: { temperature: 0.7 } })));
    expect(temperature).toMatchObject({ reason: 'unsupported_parameter', param: 'temperature' });
    expect(engine.unsupported.has('temperature')).toBe(true);
    expect(engine.unsupported.has('maxTokens')).toBe(false);
  });

  it('refuses tools: the OCR model cannot call them', async () => {
    const tools = { definitions: [{ name: 'f', parameters: { type: 'object' } }], choice: 'required' as const, parallel: false };
    const refused = await refusal(collect(engine, chat([imageMessage(dataUri(TAXIS))], { tools })));
    expect(refused).toMatchObject({ reason: 'unsupported_parameter', param: 'tools' });
  });

  it('refuses data URIs that are not images, whatever they declare', async () => {
    const cases = [
      'data:text/plain;base64,' + Buffer.from('hello world, not an image').toString('base64'),
      'data:image/png;base64,' + Buffer.from('hello world, not an image').toString('base64'),
      'data:image/png,' + encodeURIComponent('not base64'),
      'data:image/png;base64,!!!!',
      'data:image/png;base64,',
      'file:///etc/passwd',
      '/etc/passwd',
    ];
    for (const url of cases) {
      const error = await refusal(collect(engine, chat([imageMessage(url)])));
      expect(error, url).toMatchObject({ reason: 'invalid_request', param: 'messages[0].content[1].image_url.url' });
    }
  });

  it('refuses an image whose signature is a PNG but whose body is not, and stays usable', async () => {
    const broken = Buffer.concat([FOX.subarray(0, 16), Buffer.alloc(400, 7)]);
    const error = await refusal(collect(engine, chat([imageMessage(dataUri(broken))])));
    expect(error).toMatchObject({ reason: 'invalid_request', param: 'messages[0].content[1].image_url.url' });
    expect(error.message).toMatch(/could not be decoded/);
    const { text } = await collect(engine, chat([imageMessage(dataUri(TAXIS))]));
    expect(words(text)).toEqual(['SEVEN', 'TAXIS']);
  });

  it('refuses a bad image among good ones before sending any text', async () => {
    const broken = Buffer.concat([FOX.subarray(0, 16), Buffer.alloc(400, 7)]);
    for (const urls of [
      [dataUri(TAXIS), 'data:image/png;base64,' + Buffer.from('not an image').toString('base64')],
      [dataUri(TAXIS), dataUri(broken)],
    ]) {
      const events: GenerationEvent[] = [];
      const error = await refusal(
        (async () => {
          for await (const event of engine.generate(chat([imageMessage(...urls)]))) events.push(event);
        })(),
      );
      expect(error).toMatchObject({ reason: 'invalid_request', param: 'messages[0].content[2].image_url.url' });
      expect(events).toEqual([]);
    }
  });

  it('refuses an image over the size cap before decoding it, by default 10 MiB', async () => {
    const small = new OcrEngine({ maxImageBytes: FOX.length - 1 });
    try {
      const error = await refusal(collect(small, chat([imageMessage(dataUri(TAXIS), dataUri(FOX))])));
      expect(error).toMatchObject({ reason: 'invalid_request', param: 'messages[0].content[2].image_url.url' });
      expect(error.message).toContain(`${FOX.length} bytes, over the limit of ${FOX.length - 1}`);
    } finally {
      await small.close();
    }
    const tenMiB = 10 * 1024 * 1024;
    const huge = Buffer.concat([FOX, Buffer.alloc(tenMiB + 1 - FOX.length)]);
    const error = await refusal(collect(engine, chat([imageMessage(dataUri(huge))])));
    expect(error.message).toContain(`${tenMiB + 1} bytes, over the limit of ${tenMiB}`);
    const exactly = Buffer.concat([FOX, Buffer.alloc(tenMiB - FOX.length)]);
    // At the cap it is read (and the trailing zeros after IEND are ignored by the decoder).
    const { text } = await collect(engine, chat([imageMessage(dataUri(exactly))]));
    expect(words(text)).toContain('JUMPS');
  });
});

describe('image URLs', () => {
  let server: http.Server;
  let base: string;
  let hits = 0;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits++;
      if (req.url === '/fox.png') return res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(FOX);
      if (req.url === '/moved') return res.writeHead(302, { location: '/fox.png' }).end();
      if (req.url === '/to-metadata') return res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      if (req.url === '/chunked-big') {
        // No content-length: the cap must be enforced while reading.
        res.writeHead(200, { 'content-type': 'image/png' });
        res.write(FOX);
        return res.end(Buffer.alloc(4096));
      }
      if (req.url === '/slow') return; // never answers
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('reads an image from a loopback URL when private targets are allowed', async () => {
    const local = new OcrEngine({ allowPrivateImageUrls: true });
    try {
      const { text, ocr } = await collect(local, chat([imageMessage(`${base}/fox.png`)]));
      expect(words(text)).toEqual(['HELLO', 'WORLD', 'QUICK', 'BROWN', 'FOX', 'JUMPS']);
      expect(ocr.images[0]).toMatchObject({ format: 'png', bytes: FOX.length });
    } finally {
      await local.close();
    }
  });

  it('refuses a loopback URL, by address or by name, without private targets, and never connects', async () => {
    const before = hits;
    const port = new URL(base).port;
    for (const url of [`${base}/fox.png`, `http://localhost:${port}/fox.png`, `http://[::ffff:127.0.0.1]:${port}/fox.png`]) {
      const error = await refusal(collect(engine, chat([imageMessage(url)])));
      expect(error, url).toMatchObject({ reason: 'invalid_request', param: 'messages[0].content[1].image_url.url', message: 'The image URL is not allowed' });
    }
    expect(hits).toBe(before);
  });

  it('follows a redirect, each hop within the guard', async () => {
    const local = new OcrEngine({ allowPrivateImageUrls: ['127.0.0.1'] });
    try {
      const { text } = await collect(local, chat([imageMessage(`${base}/moved`)]));
      expect(words(text)).toEqual(['HELLO', 'WORLD', 'QUICK', 'BROWN', 'FOX', 'JUMPS']);
      const error = await refusal(collect(local, chat([imageMessage(`${base}/to-metadata`)])));
      expect(error).toMatchObject({ reason: 'invalid_request', param: 'messages[0].content[1].image_url.url', message: 'The image URL is not allowed' });
    } finally {
      await local.close();
    }
  });

  it('refuses a URL that fails, is too large or too slow', async () => {
    // A second for the fetches that must fail otherwise (404, too large) to finish in, on a loaded host too.
    const local = new OcrEngine({ allowPrivateImageUrls: true, maxImageBytes: FOX.length + 100, imageFetchTimeoutMs: 1_000 });
    try {
      const cases: [string, RegExp][] = [
        ['/missing.png', /answered HTTP 404/],
        ['/chunked-big', /larger than/],
        ['/slow', /did not answer within 1000 ms/],
      ];
      for (const [path, message] of cases) {
        const error = await refusal(collect(local, chat([imageMessage(`${base}${path}`)])));
        expect(error, path).toMatchObject({ reason: 'invalid_request', param: 'messages[0].content[1].image_url.url' });
        expect(error.message, path).toMatch(message);
      }
      const credentials = await refusal(collect(local, chat([imageMessage(`http://user:secret@127.0.0.1:1/fox.png`)])));
      expect(credentials.message).toMatch(/credentials/);
    } finally {
      await local.close();
    }
  });
});

describe('a missing or broken model', () => {
  it('is listed as failed and refuses to generate as unavailable', async () => {
    const broken = new OcrEngine({ languagePath: '/nonexistent/tessdata' });
    try {
      const [model] = await broken.models();
      expect(model).toMatchObject({ id: 'ocr-eng', status: 'failed' });
      expect(model.error).toContain('/nonexistent/tessdata');
      expect(await broken.health()).toMatchObject({ ok: false });
      const error = await refusal(collect(broken, chat([imageMessage(dataUri(TAXIS))])));
      expect(error.reason).toBe('unavailable');
    } finally {
      await broken.close();
    }
  });

  it('a corrupt model file is reported as failed and refused as unavailable, never waited on forever', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'ocr-corrupt-'));
    await writeFile(path.join(folder, 'eng.traineddata.gz'), gzipSync(Buffer.from('not a traineddata file')));
    const broken = new OcrEngine({ languagePath: folder });
    try {
      const error = await refusal(collect(broken, chat([imageMessage(dataUri(TAXIS))])));
      expect(error.reason).toBe('unavailable');
      expect(error.message).toMatch(/could not load the English model/);
      const [model] = await broken.models();
      expect(model).toMatchObject({ status: 'failed', error: error.message });
    } finally {
      await broken.close();
      await rm(folder, { recursive: true, force: true });
    }
  });
});
