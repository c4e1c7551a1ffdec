import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

let platform: TestPlatform;

beforeAll(async () => {
  platform = await startTestPlatform();
});

afterAll(async () => {
  await platform?.close();
});

let counter = 0;
/** A live key of a fresh account, so each test counts only its own members. */
function freshKey(kind: 'live' | 'test' = 'live', account = `idem-${++counter}`): Promise<string> {
  return platform.issueKey(account, kind);
}

function createMember(key: string, idempotencyKey: string, json: Record<string, unknown>) {
  return platform.request('/api/v1/members', { method: 'POST', key, json, headers: { 'idempotency-key': idempotencyKey } });
}

async function memberIds(key: string): Promise<string[]> {
  const response = await platform.request('/api/v1/members', { key });
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: { id: string }[] }).data.map((m) => m.id);
}

describe('POST /api/v1/members with an Idempotency-Key', () => {
  it('retried with the same body gets the first 201 and its body again, and stores one member', async () => {
    const key = await freshKey();
    const member = { name: 'Ann Lee', email: 'ann@example.org' };
    const first = await createMember(key, 'create-ann', member);
    const firstBody = await first.text();
    expect(first.status, firstBody).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    const retry = await createMember(key, 'create-ann', member);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(await retry.text()).toBe(firstBody);
    expect(await memberIds(key)).toEqual([JSON.parse(firstBody).id]);
  });

  it('with another body is refused with 400 idempotency_key_reused in the membership error body', async () => {
    const key = await freshKey();
    expect((await createMember(key, 'create-once', { name: 'Bo', email: 'bo@example.org' })).status).toBe(201);
    const other = await createMember(key, 'create-once', { name: 'Cy', email: 'cy@example.org' });
    expect(other.status).toBe(400);
    expect(await other.json()).toEqual({
      error: {
        type: 'invalid_request_error',
        code: 'idempotency_key_reused',
        message: expect.any(String),
        param: null,
        request_id: other.headers.get('x-request-id'),
      },
    });
    expect(await memberIds(key)).toHaveLength(1);
  });

  it('sent ten times at once creates one member, and all ten get the same 201', async () => {
    const key = await freshKey();
    const member = { name: 'Dee', email: 'dee@example.org' };
    const responses = await Promise.all(Array.from({ length: 10 }, () => createMember(key, 'create-dee', member)));
    const bodies = await Promise.all(responses.map((r) => r.text()));
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(bodies).size).toBe(1);
    expect(responses.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(9);
    expect(await memberIds(key)).toEqual([JSON.parse(bodies[0]).id]);
  });

  it('keeps a refusal the handler gave: a retry of a bad request gets the same 400', async () => {
    const key = await freshKey();
    const first = await createMember(key, 'bad-email', { name: 'Eve', email: 'not an email' });
    const firstBody = await first.text();
    expect(first.status, firstBody).toBe(400);
    const retry = await createMember(key, 'bad-email', { name: 'Eve', email: 'not an email' });
    expect(retry.status).toBe(400);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.text()).toBe(firstBody);
  });

  it('is one key per account and mode: the same key with a test key creates a test member', async () => {
    const account = `idem-${++counter}`;
    const live = await freshKey('live', account);
    const test = await freshKey('test', account);
    const member = { name: 'Fay', email: 'fay@example.org' };
    const inLive = await createMember(live, 'shared-key', member);
    const inTest = await createMember(test, 'shared-key', member);
    expect([inLive.status, inTest.status]).toEqual([201, 201]);
    expect(inTest.headers.get('idempotent-replayed')).toBeNull();
    expect(((await inTest.json()) as { livemode: boolean }).livemode).toBe(false);
    expect(await memberIds(live)).toHaveLength(1);
    expect(await memberIds(test)).toHaveLength(1);
  });

  it('with an invalid key is refused with 400 invalid_idempotency_key', async () => {
    const key = await freshKey();
    const response = await createMember(key, 'k'.repeat(256), { name: 'Gil', email: 'gil@example.org' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('invalid_idempotency_key');
    expect(await memberIds(key)).toEqual([]);
  });
});

describe('POST /graphql with an Idempotency-Key', () => {
  const CREATE = 'mutation ($email: String!) { createMember(name: "Hal", email: $email) { id email } }';

  it('runs the mutation once and replays its response', async () => {
    const key = await freshKey();
    const send = (email: string) =>
      platform.request('/graphql', {
        method: 'POST',
        key,
        json: { query: CREATE, variables: { email } },
        headers: { 'idempotency-key': 'gql-create' },
      });
    const first = await send('hal@example.org');
    const firstBody = await first.text();
    expect(first.status, firstBody).toBe(200);
    expect(JSON.parse(firstBody).data.createMember.email).toBe('hal@example.org');
    const retry = await send('hal@example.org');
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.text()).toBe(firstBody);
    expect(await memberIds(key)).toHaveLength(1);

    const other = await send('other@example.org');
    expect(other.status).toBe(400);
    expect(await other.json()).toEqual({
      errors: [{ message: expect.any(String), extensions: { code: 'BAD_REQUEST', reason: 'idempotency_key_reused' } }],
    });
  });
});
