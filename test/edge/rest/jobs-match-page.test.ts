import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

// The ranking's page travels in MatchingMember's and MatchingJob's entity key (`id page`), which
// is the gateway's business: a client sees a page object under the ranked field, as every list
// answers, and never the key's internal string.

let platform: TestPlatform;
let key: string;
type Json = Record<string, any>;

beforeAll(async () => {
  platform = await startTestPlatform();
  key = await platform.issueKey(`match-page-${process.pid}`, 'live');
});

afterAll(async () => {
  await platform?.close();
});

async function ok(method: string, path: string, json?: unknown, status = 200): Promise<Json> {
  const response = await platform.request(`/api/v1${path}`, { method, key, json });
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as Json;
}

async function graphql(query: string, variables: Json): Promise<Json> {
  const response = await platform.request('/graphql', { method: 'POST', key, json: { query, variables } });
  return (await response.json()) as Json;
}

describe('GET /jobs/match pages like every other list', () => {
  let member: Json;
  let posting: Json;

  beforeAll(async () => {
    member = await ok('POST', '/members', { name: 'Ada', email: `ada-${process.pid}@example.org`, headline: 'Backend engineer', skills: ['TypeScript', 'PostgreSQL'] }, 201);
    const other = await ok('POST', '/members', { name: 'Bob', email: `bob-${process.pid}@example.org`, headline: 'Engineer', skills: ['TypeScript'] }, 201);
    posting = await ok('POST', '/jobs', { title: 'Backend Engineer', description: 'APIs in TypeScript.', postedBy: other.id, skills: ['typescript', 'postgresql'] }, 201);
    await ok('POST', '/jobs', { title: 'TypeScript developer', description: 'More TypeScript.', postedBy: other.id, skills: ['typescript'] }, 201);
  });

  it('answers the member with its ranked page (data, hasMore, nextCursor) and no internal page key', async () => {
    const first = await ok('GET', `/jobs/match?memberId=${member.id}&limit=1`);
    expect(Object.keys(first).sort()).toEqual(['headline', 'id', 'jobMatches', 'location', 'skills']);
    expect(Object.keys(first.jobMatches).sort()).toEqual(['data', 'hasMore', 'nextCursor']);
    expect(first.jobMatches).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });
    const second = await ok('GET', `/jobs/match?memberId=${member.id}&limit=1&after=${encodeURIComponent(first.jobMatches.nextCursor)}`);
    expect(second).not.toHaveProperty('page');
    expect(second.jobMatches.data).toHaveLength(1);
    expect(second.jobMatches.data[0].job.id).not.toBe(first.jobMatches.data[0].job.id);
  });

  it('answers the posting with its ranked page and no internal page key', async () => {
    const result = await ok('GET', `/jobs/match?jobId=${posting.id}&limit=1`);
    expect(result).not.toHaveProperty('page');
    expect(result.id).toBe(posting.id);
    expect(Object.keys(result.candidateMatches).sort()).toEqual(['data', 'hasMore', 'nextCursor']);
  });

  it('keeps the key out of the GraphQL API and the REST document', async () => {
    const asked = await graphql('query($id: ID!) { jobMatches(memberId: $id) { ... on MatchingMember { id page } } }', { id: member.id });
    expect(asked.errors?.[0]?.message).toMatch(/Cannot query field "page" on type "MatchingMember"/);
    const job = await graphql('query($id: ID!) { matchingJob(id: $id, limit: 1) { id page } }', { id: posting.id });
    expect(job.errors?.[0]?.message).toMatch(/Cannot query field "page" on type "MatchingJob"/);
    const document = (await (await platform.request('/api/v1/openapi.json', { key })).json()) as Json;
    expect(JSON.stringify(document.components?.schemas?.MatchingMember ?? {})).not.toContain('"page"');
    expect(JSON.stringify(document.components?.schemas?.MatchingJob ?? {})).not.toContain('"page"');
  });
});
