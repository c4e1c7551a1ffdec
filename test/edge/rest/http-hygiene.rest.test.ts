import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

// HTTP as a REST client expects it: HEAD wherever GET is, 405 with the right Allow wherever a
// path exists with other methods (hand-written document paths included), and refusals that say
// what they are.

let platform: TestPlatform;
let key: string;
let traceKey: string;

beforeAll(async () => {
  platform = await startTestPlatform({ rateLimits: { livePerMinute: 3, testPerMinute: 3, inferencePerMinute: 100, anonymousPerMinute: 100 } });
  key = await platform.issueKey('acct-hygiene');
  traceKey = await platform.issueKey('acct-hygiene-traces', 'traceroute');
});

afterAll(async () => {
  await platform?.close();
});

describe('methods', () => {
  it('HEAD answers wherever GET does, with its status and headers and no body', async () => {
    const get = await platform.request('/v1/public/traces?limit=1', { headers: { 'x-api-key': traceKey } });
    const head = await platform.request('/v1/public/traces?limit=1', { method: 'HEAD', headers: { 'x-api-key': traceKey } });
    expect(head.status).toBe(get.status);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(await head.text()).toBe('');
  });

  it('a hand-written path with another method is 405 naming its methods, not a lookup of a document called "upload"', async () => {
    const response = await platform.request('/api/v1/documents/upload', { key });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed');
  });

  it('a method a resource does not take is 405 with every method it does take', async () => {
    const response = await platform.request('/api/v1/documents/00000000-0000-4000-8000-000000000000', { method: 'PATCH', key });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD, PUT, DELETE');
    const members = await platform.request('/api/v1/members/00000000-0000-4000-8000-000000000000', { method: 'PATCH', key });
    expect(members.headers.get('allow')).toBe('GET, HEAD, PUT, DELETE');
  });
});

describe('GraphQL over HTTP', () => {
  it('a subscription sent with POST is 400 saying to use the websocket', async () => {
    const own = await platform.issueKey('acct-hygiene-graphql');
    const response = await platform.request('/graphql', { method: 'POST', key: own, json: { query: 'subscription { tenderBidCount(tenderId: "00000000-0000-4000-8000-000000000000") { count } }' } });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(body.errors[0].message).toMatch(/websocket/i);
  });
});

describe('limits', () => {
  it('the 429 says the limit is the account\'s, as it is counted', async () => {
    const own = await platform.issueKey('acct-hygiene-limits');
    let last: Response | undefined;
    for (let i = 0; i < 4; i++) last = await platform.request('/api/v1/members?limit=1', { key: own });
    expect(last!.status).toBe(429);
    expect(((await last!.json()) as { error: { message: string } }).error.message).toMatch(/per minute for this account/);
  });
});
