import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

// One person, one active application per posting: an outside candidate whose email is a member's
// (same account and mode) is that member, whichever way each application came in.

let platform: TestPlatform;
let db: pg.Client;

beforeAll(async () => {
  platform = await startTestPlatform();
  db = new pg.Client({ connectionString: platform.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await platform?.close();
});

type Json = Record<string, any>;
let counter = 0;

async function call(key: string, method: string, path: string, json?: unknown): Promise<{ status: number; body: Json }> {
  const response = await platform.request(`/api/v1${path}`, { method, key, json });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {} };
}

async function ok(key: string, method: string, path: string, json: unknown, status: number): Promise<Json> {
  const result = await call(key, method, path, json);
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  return result.body;
}

/** A fresh account (live key) with a posting and a member applicant. */
async function setup(account = `one-person-${process.pid}-${++counter}`) {
  const key = await platform.issueKey(account, 'live');
  const poster = await ok(key, 'POST', '/members', { name: 'Poster', email: `poster${++counter}@example.org` }, 201);
  const email = `ada${++counter}@example.org`;
  const ada = await ok(key, 'POST', '/members', { name: 'Ada Lovelace', email }, 201);
  const job = await ok(key, 'POST', '/jobs', { title: 'Backend Engineer', description: 'APIs.', postedBy: poster.id }, 201);
  return { account, key, ada, email, job };
}

const activeCount = async (jobId: string) =>
  (await db.query(`select count(*)::int as n from marketplace.job_application where job_posting_id = $1 and status = 'active'`, [jobId])).rows[0].n as number;

describe('one active application per person and posting', () => {
  it("refuses an outside candidate with a member's email (whatever its case) once the member applied, naming the member's application", async () => {
    const { key, ada, email, job } = await setup();
    const first = await ok(key, 'POST', `/jobs/${job.id}/apply`, { memberId: ada.id }, 201);
    const second = await call(key, 'POST', `/jobs/${job.id}/apply`, { name: 'Ada L.', email: email.toUpperCase() });
    expect(second.status, JSON.stringify(second.body)).toBe(409);
    expect(second.body.error).toMatchObject({ code: 'application_exists', existing_id: first.id });
    expect(await activeCount(job.id)).toBe(1);
  });

  it("refuses the member once an outside candidate applied with the member's email", async () => {
    const { key, ada, email, job } = await setup();
    const first = await ok(key, 'POST', `/jobs/${job.id}/apply`, { name: 'Ada', email }, 201);
    const second = await call(key, 'POST', `/jobs/${job.id}/apply`, { memberId: ada.id });
    expect(second.status, JSON.stringify(second.body)).toBe(409);
    expect(second.body.error).toMatchObject({ code: 'application_exists', existing_id: first.id });
    // Over GraphQL the same refusal, with the id in extensions.
    const gql = (await (await platform.request('/graphql', { method: 'POST', key, json: { query: 'mutation($id: ID!, $m: ID) { applyToJob(id: $id, memberId: $m) { id } }', variables: { id: job.id, m: ada.id } } })).json()) as Json;
    expect(gql.errors[0].extensions).toMatchObject({ code: 'CONFLICT', reason: 'application_exists', existingId: first.id });
  });

  it('counts an outside application made before the person became a member', async () => {
    const { key, job } = await setup();
    const email = `late${++counter}@example.org`;
    const first = await ok(key, 'POST', `/jobs/${job.id}/apply`, { name: 'Grace', email }, 201);
    const grace = await ok(key, 'POST', '/members', { name: 'Grace Hopper', email: email.toUpperCase() }, 201);
    const second = await call(key, 'POST', `/jobs/${job.id}/apply`, { memberId: grace.id });
    expect(second.body.error).toMatchObject({ code: 'application_exists', existing_id: first.id });
  });

  it('lets the person apply again once the active application is withdrawn', async () => {
    const { key, ada, email, job } = await setup();
    const first = await ok(key, 'POST', `/jobs/${job.id}/apply`, { memberId: ada.id }, 201);
    await ok(key, 'POST', `/job-applications/${first.id}/withdraw`, {}, 200);
    const again = await ok(key, 'POST', `/jobs/${job.id}/apply`, { name: 'Ada', email }, 201);
    expect(again).toMatchObject({ status: 'ACTIVE', candidateEmail: email });
    expect((await call(key, 'POST', `/jobs/${job.id}/apply`, { memberId: ada.id })).body.error).toMatchObject({ code: 'application_exists', existing_id: again.id });
  });

  it("does not count a member of the account's other mode, nor of another account", async () => {
    const { account, key, email, job } = await setup();
    const sandbox = await platform.issueKey(account, 'test');
    await ok(sandbox, 'POST', '/members', { name: 'Ada (sandbox)', email: `other-${email}` }, 201);
    const elsewhere = await platform.issueKey(`one-person-elsewhere-${++counter}`, 'live');
    const stranger = await ok(elsewhere, 'POST', '/members', { name: 'Someone', email: `other-${email}` }, 201);
    const outside = await ok(key, 'POST', `/jobs/${job.id}/apply`, { name: 'Someone', email: `other-${email}` }, 201);
    expect(outside).toMatchObject({ member: null, candidateEmail: `other-${email}` });
    // The other account's member id names nobody here: an application by it is a different candidate.
    await ok(key, 'POST', `/jobs/${job.id}/apply`, { memberId: stranger.id }, 201);
    expect(await activeCount(job.id)).toBe(2);
  });

  it('lets exactly one of concurrent applications by member id and by email in; every other names it', async () => {
    const { key, ada, email, job } = await setup();
    const attempts = Array.from({ length: 10 }, (_, i) =>
      call(key, 'POST', `/jobs/${job.id}/apply`, i % 2 ? { memberId: ada.id } : { name: `Ada ${i}`, email: i % 4 ? email : email.toUpperCase() }),
    );
    const results = await Promise.all(attempts);
    const created = results.filter((r) => r.status === 201);
    expect(created, JSON.stringify(results.map((r) => r.status))).toHaveLength(1);
    for (const refused of results.filter((r) => r.status !== 201)) {
      expect(refused.status, JSON.stringify(refused.body)).toBe(409);
      expect(refused.body.error).toMatchObject({ code: 'application_exists', existing_id: created[0].body.id });
    }
    expect(await activeCount(job.id)).toBe(1);
  });
});
