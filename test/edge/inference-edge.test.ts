import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, testConfig, type TestPlatform } from '../support/platform-harness.js';

let platform: TestPlatform;
let textKey: string;
let imageKey: string;
const limits = testConfig().rateLimits;

beforeAll(async () => {
  platform = await startTestPlatform({ rateLimits: { ...limits, inferencePerMinute: 50 } });
  textKey = await platform.issueKey('inference-a', 'text');
  imageKey = await platform.issueKey('inference-a', 'image');
});
afterAll(async () => {
  await platform?.close();
});

/** Asserts OpenAI's error body, which its SDKs parse: {"error": {message, type, param, code}}. */
async function openAIError(response: Response, status: number, code: string, type: string) {
  expect(response.status).toBe(status);
  const body = (await response.json()) as { error: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(body.error).toMatchObject({ code, type, param: null });
  expect(String(body.error.message).length).toBeGreaterThan(0);
}

const EDGE_CODES = ['missing_api_key', 'invalid_api_key', 'wrong_key_kind', 'rate_limit_exceeded'];

/**
 * Passed the edge: the interface behind it answered, a listing with 200, a POST without a body
 * with its own 400 (the model is missing), a path not built yet (Service I's image endpoints,
 * issue 12) with OpenAI's 404 unknown_url; never one of the edge's refusals.
 */
async function passedEdge(response: Response) {
  if (response.status === 200) return;
  const body = (await response.json()) as { error: { code: string } };
  expect([400, 404]).toContain(response.status);
  expect(EDGE_CODES).not.toContain(body.error.code);
  expect(body.error.code).toBe(response.status === 400 ? 'missing_parameter' : 'unknown_url');
}

describe('Service T (/inference/text)', () => {
  it('answers 401 without a key and with an unknown one', async () => {
    await openAIError(await platform.request('/inference/text/v1/models'), 401, 'missing_api_key', 'invalid_request_error');
    await openAIError(await platform.request('/inference/text/v1/models', { key: 'tk_nope' }), 401, 'invalid_api_key', 'invalid_request_error');
  });

  it('answers 403 to a key of another kind and lets a text key through', async () => {
    await openAIError(await platform.request('/inference/text/v1/models', { key: imageKey }), 403, 'wrong_key_kind', 'permission_error');
    const live = await platform.issueKey('inference-b', 'live');
    await openAIError(await platform.request('/inference/text/v1/chat/completions', { method: 'POST', key: live, json: {} }), 403, 'wrong_key_kind', 'permission_error');
    await passedEdge(await platform.request('/inference/text/v1/models', { key: textKey }));
  });

  it('answers 429 with Retry-After past the per-minute limit', async () => {
    const own = await startTestPlatform({ rateLimits: { ...limits, inferencePerMinute: 2 } });
    try {
      const key = await own.issueKey('inference-c', 'text');
      await passedEdge(await own.request('/inference/text/v1/models', { key }));
      await passedEdge(await own.request('/inference/text/v1/models', { key }));
      const refused = await own.request('/inference/text/v1/models', { key });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      await openAIError(refused, 429, 'rate_limit_exceeded', 'rate_limit_error');
    } finally {
      await own.close();
    }
  });
});

describe('Service I (/inference/image)', () => {
  it.each(['/v1/txt2img', '/v1/img2img', '/v1/upscale-img', '/sdapi/v1/sd-models', '/v1/img-samplers', '/v1/upscalers', '/v1/img-options', '/v1/parallel-requests'])(
    '%s needs an image key',
    async (path) => {
      const method = ['/v1/txt2img', '/v1/img2img', '/v1/upscale-img'].includes(path) ? 'POST' : 'GET';
      await openAIError(await platform.request(`/inference/image${path}`, { method, key: textKey }), 403, 'wrong_key_kind', 'permission_error');
      await passedEdge(await platform.request(`/inference/image${path}`, { method, key: imageKey }));
    },
  );

  it.each(['/v1/chat/completions', '/v1/completions', '/v1/tokenize', '/v1/models'])('%s needs a text key', async (path) => {
    const method = path === '/v1/models' ? 'GET' : 'POST';
    await openAIError(await platform.request(`/inference/image${path}`, { method, key: imageKey }), 403, 'wrong_key_kind', 'permission_error');
    await passedEdge(await platform.request(`/inference/image${path}`, { method, key: textKey }));
  });

  it('answers 401 without a key', async () => {
    await openAIError(await platform.request('/inference/image/v1/txt2img', { method: 'POST', json: {} }), 401, 'missing_api_key', 'invalid_request_error');
  });
});

describe('the keyless proxy and gateway', () => {
  it.each(['/inference/proxy/api/txt2img', '/inference/gateway/v1/chat/completions'])('%s takes no key and ignores an Authorization header', async (path) => {
    await passedEdge(await platform.request(path, { method: 'POST', json: {} }));
    await passedEdge(await platform.request(path, { method: 'POST', json: {}, headers: { authorization: 'Bearer garbage' } }));
    await passedEdge(await platform.request(path, { method: 'POST', json: {}, key: textKey }));
  });

  it('counts every keyless request in the client address window (the abuse limit), with 429 and Retry-After past it', async () => {
    const own = await startTestPlatform({ rateLimits: { ...limits, anonymousPerMinute: 2 } });
    try {
      const first = await own.request('/inference/gateway/v1/models');
      expect(first.status).toBe(200);
      expect(first.headers.get('x-ratelimit-limit')).toBe('2');
      expect((await own.request('/inference/proxy/v1/models')).status).toBe(200);
      const refused = await own.request('/inference/gateway/v1/models', { headers: { authorization: 'Bearer whatever' } });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      await openAIError(refused, 429, 'rate_limit_exceeded', 'rate_limit_error');
    } finally {
      await own.close();
    }
  });
});
