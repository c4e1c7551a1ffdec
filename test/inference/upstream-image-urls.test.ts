import http from 'node:http';
import type net from 'node:net';
import OpenAI from 'openai';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inferenceConfigFrom } from '../../subgraphs/inference/config/load-inference-config.js';
import { MAX_IMAGE_REDIRECTS } from '../../subgraphs/inference/image-input/image-fetcher.js';
import { LoopbackOpenAiServer } from '../support/loopback-openai-server.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

/**
 * Images of a chat sent to an upstream vision model (a loopback llama.cpp server) through Service T
 * and the keyless proxy: the upstream never gets a URL. An http(s) image is fetched by the platform
 * through the SSRF guard (redirects followed, each hop checked) and sent on as a data URI; other
 * schemes, private addresses and redirects to them are refused before the upstream hears of the
 * request. The image host is a loopback server the engine's allowPrivateImageUrls lets through
 * (127.0.0.1 only), as a deployment would let through its own image host.
 */
let platform: TestPlatform;
let upstream: LoopbackOpenAiServer;
let images: http.Server;
let imageBase: string;
let textKey: string;
let png: Buffer;

const MODEL = 'vision-model';
const IMAGE_PARAM = 'messages[0].content[1].image_url.url';

beforeAll(async () => {
  png = await sharp({ create: { width: 3, height: 2, channels: 3, background: { r: 200, g: 10, b: 10 } } }).png().toBuffer();
  upstream = await LoopbackOpenAiServer.start('llama.cpp', [{ id: MODEL, contextLength: 4096, vision: true }]);
  images = http.createServer((req, res) => {
    const path = req.url ?? '/';
    const redirect = (location: string) => res.writeHead(302, { location }).end();
    if (path === '/fox.png') return void res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
    if (path === '/moved') return void redirect('/fox.png');
    const chain = /^\/chain\/(\d+)$/.exec(path);
    if (chain) return void redirect(Number(chain[1]) === 0 ? '/fox.png' : `/chain/${Number(chain[1]) - 1}`);
    if (path === '/to-metadata') return void redirect('http://169.254.169.254/latest/meta-data/iam/security-credentials/');
    if (path === '/to-private') return void redirect('http://10.0.0.5/admin');
    if (path === '/to-file') return void redirect('file:///etc/passwd');
    if (path === '/page.html') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not an image</html>');
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
  imageBase = `http://127.0.0.1:${(images.address() as net.AddressInfo).port}`;
  const engines = [{ type: 'openai-upstream', url: upstream.url, flavour: 'llama.cpp', allowPrivateImageUrls: ['127.0.0.1'], imageFetchTimeoutMs: 5_000 }];
  const config = inferenceConfigFrom(
    {
      providers: [{ id: 'provider_a', name: 'A', engines }],
      interfaces: {
        serviceT: { providers: ['provider_a'] },
        serviceI: { providers: ['provider_a'] },
        proxy: { providers: ['provider_a'] },
        gateway: { providers: ['provider_a'] },
      },
    },
    null,
  );
  platform = await startTestPlatform({ inference: config });
  textKey = await platform.issueKey('acme', 'text');
}, 60_000);

// Every image url the upstream received, whichever test sent it.
const everSent: string[] = [];

afterAll(async () => {
  // Whatever the tests did, no image reached the upstream as anything but a data URI.
  const sent = [...everSent, ...(upstream?.requests.flatMap((request) => imageUrlsOf(request.body)) ?? [])];
  await platform?.close();
  await upstream?.close();
  await new Promise<void>((resolve) => (images ? images.close(() => resolve()) : resolve()));
  expect(sent.length).toBeGreaterThan(0);
  for (const url of sent) expect(url.startsWith('data:'), url.slice(0, 80)).toBe(true);
});

afterEach(() => {
  everSent.push(...upstream.requests.flatMap((request) => imageUrlsOf(request.body)));
  upstream.reset();
});

const MOUNTS = [
  { name: 'Service T', mount: '/inference/text', key: () => textKey, badValue: 422 },
  { name: 'the proxy', mount: '/inference/proxy', key: () => 'unused', badValue: 400 },
] as const;

function client(mount: string, key: string): OpenAI {
  return new OpenAI({ baseURL: `${platform.baseUrl}${mount}/v1`, apiKey: key, maxRetries: 0 });
}

function imageChat(url: string): OpenAI.ChatCompletionCreateParamsNonStreaming {
  return { model: MODEL, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in it?' }, { type: 'image_url', image_url: { url } }] }] };
}

/** Every image_url.url of a recorded chat body. */
function imageUrlsOf(body: unknown): string[] {
  const messages = (body as { messages?: { content?: unknown }[] } | undefined)?.messages ?? [];
  return messages.flatMap((message) =>
    Array.isArray(message.content) ? message.content.flatMap((part: { type?: string; image_url?: { url: string } }) => (part.type === 'image_url' && part.image_url ? [part.image_url.url] : [])) : [],
  );
}

const generations = () => upstream.requests.filter((request) => request.method === 'POST' && request.path === '/v1/chat/completions');

async function refusal(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

describe.each(MOUNTS)('$name', ({ mount, key, badValue }) => {
  it('fetches an http image itself and sends the upstream its bytes as a data URI, never the URL', async () => {
    const done = await client(mount, key()).chat.completions.create(imageChat(`${imageBase}/fox.png`));
    expect(done.choices[0]!.message.content).toBe('Hello, loopback world.');
    expect(generations()).toHaveLength(1);
    expect(imageUrlsOf(generations()[0]!.body)).toEqual([`data:image/png;base64,${png.toString('base64')}`]);
  });

  it('follows redirects within the guard, up to the limit', async () => {
    for (const path of ['/moved', `/chain/${MAX_IMAGE_REDIRECTS - 1}`]) {
      await client(mount, key()).chat.completions.create(imageChat(`${imageBase}${path}`));
      expect(imageUrlsOf(generations().at(-1)!.body), path).toEqual([`data:image/png;base64,${png.toString('base64')}`]);
    }
  });

  it('passes a data URI on as it came', async () => {
    const uri = `data:image/png;base64,${png.toString('base64')}`;
    await client(mount, key()).chat.completions.create(imageChat(uri));
    expect(imageUrlsOf(generations()[0]!.body)).toEqual([uri]);
  });

  it('refuses other schemes with the interface’s error before the upstream hears of the request', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://127.0.0.1/fox.png', 'gopher://127.0.0.1:70/_', 'javascript:alert(1)']) {
      const error = await refusal(client(mount, key()).chat.completions.create(imageChat(url)));
      expect(error.status, url).toBe(badValue);
      expect(error, url).toMatchObject({ code: 'invalid_value', param: IMAGE_PARAM });
      expect(error.message).toMatch(/http\(s\) URL or a base64 data URI/);
    }
    expect(generations()).toHaveLength(0);
  });

  it('refuses private and metadata addresses, directly or by a redirect, without naming what they resolve to', async () => {
    const refused = [
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.5/admin',
      'http://[::1]/x.png',
      'http://127.0.0.2/x.png',
      `${imageBase}/to-metadata`,
      `${imageBase}/to-private`,
    ];
    for (const url of refused) {
      const error = await refusal(client(mount, key()).chat.completions.create(imageChat(url)));
      expect(error.status, url).toBe(badValue);
      expect(error, url).toMatchObject({ code: 'invalid_value', param: IMAGE_PARAM });
      expect(error.message, url).toMatch(/The image URL is not allowed$/);
    }
    expect(generations()).toHaveLength(0);
  });

  it('refuses a redirect to another scheme, too many redirects, credentials and what is no image', async () => {
    const cases: [string, RegExp][] = [
      [`${imageBase}/to-file`, /redirected to a URL that is not http\(s\)/],
      [`${imageBase}/chain/${MAX_IMAGE_REDIRECTS}`, new RegExp(`redirected more than ${MAX_IMAGE_REDIRECTS} times`)],
      [`http://user:secret@127.0.0.1:${new URL(imageBase).port}/fox.png`, /credentials/],
      [`${imageBase}/page.html`, /not a PNG, JPEG/],
      [`${imageBase}/missing.png`, /HTTP 404/],
    ];
    for (const [url, message] of cases) {
      const error = await refusal(client(mount, key()).chat.completions.create(imageChat(url)));
      expect(error.status, url).toBe(badValue);
      expect(error, url).toMatchObject({ code: 'invalid_value', param: IMAGE_PARAM });
      expect(error.message, url).toMatch(message);
      expect(error.message, url).not.toContain('secret');
    }
    expect(generations()).toHaveLength(0);
  });

  it('refuses a streamed request with a refused image with its status, not a broken stream', async () => {
    const error = await refusal(client(mount, key()).chat.completions.create({ ...imageChat('http://169.254.169.254/latest/meta-data/'), stream: true }));
    expect(error.status).toBe(badValue);
    expect(generations()).toHaveLength(0);
  });
});
