import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

let platform: TestPlatform;

beforeAll(async () => {
  platform = await startTestPlatform();
});

afterAll(async () => {
  await platform?.close();
});

type Json = Record<string, any>;
let counter = 0;
const accountOf = new Map<string, string>();

async function call(key: string, method: string, path: string, json?: unknown): Promise<{ status: number; body: Json }> {
  const response = await platform.request(`/api/v1${path}`, { method, key, json });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {} };
}

async function ok(key: string, method: string, path: string, json: unknown, status = 200): Promise<Json> {
  const result = await call(key, method, path, json);
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  return result.body;
}

const member = (key: string, name: string, extra: Json) => ok(key, 'POST', '/members', { name, email: `${name.toLowerCase().replace(/\W/g, '')}${++counter}@example.org`, ...extra }, 201);
const job = (key: string, postedBy: string, extra: Json) => ok(key, 'POST', '/jobs', { description: 'A role.', postedBy, ...extra }, 201);

describe('GET /jobs/match', () => {
  let key: string;
  let ada: Json;
  let bob: Json;
  let carl: Json;
  let backend: Json;
  let frontend: Json;
  let gardener: Json;
  let closed: Json;

  beforeAll(async () => {
    const account = `match-${++counter}`;
    key = await platform.issueKey(account, 'live');
    accountOf.set(key, account);
    ada = await member(key, 'Ada', { headline: 'Backend engineer building payment APIs', skills: ['TypeScript', 'PostgreSQL', 'GraphQL'], city: 'Leeds', country: 'GB' });
    bob = await member(key, 'Bob', { headline: 'Frontend developer', skills: ['TypeScript', 'React'], city: 'Berlin', country: 'DE' });
    carl = await member(key, 'Carl', { headline: 'Gardener and landscaper', skills: ['Pruning'] });
    backend = await job(key, ada.id, { title: 'Backend Engineer', description: 'Design payment APIs in TypeScript on PostgreSQL.', skills: ['typescript', 'postgresql', 'graphql', 'kafka'], location: 'Leeds' });
    frontend = await job(key, ada.id, { title: 'Frontend Developer', description: 'Build React interfaces.', skills: ['typescript', 'react'], remote: true });
    gardener = await job(key, ada.id, { title: 'Head gardener', description: 'Look after the grounds.', skills: ['pruning'], location: 'York' });
    closed = await job(key, ada.id, { title: 'Backend Engineer (old)', description: 'Payment APIs in TypeScript.', skills: ['typescript', 'postgresql'], location: 'Leeds' });
    await ok(key, 'POST', `/jobs/${closed.id}/close`, {});
  });

  it('ranks open postings for a member, best first, each score explained', async () => {
    const result = await ok(key, 'GET', `/jobs/match?memberId=${ada.id}`, undefined);
    const matches = result.jobMatches.data;
    expect(matches.map((m: Json) => m.job.id)).toEqual([backend.id, frontend.id]);
    expect(matches.some((m: Json) => m.job.id === closed.id || m.job.id === gardener.id)).toBe(false);
    const best = matches[0];
    expect(best).toMatchObject({ matchedSkills: ['typescript', 'postgresql', 'graphql'], missingSkills: ['kafka'], components: { skills: 45, location: 10 } });
    expect(best.components.text).toBeGreaterThan(0);
    expect(best.score).toBe(Math.round(best.components.skills + best.components.text + best.components.location));
    expect(best.reasons).toEqual(expect.arrayContaining(['Has 3 of 4 skills asked for: typescript, postgresql, graphql', 'Missing: kafka', 'Located in Leeds']));
    expect(matches[1]).toMatchObject({ matchedSkills: ['typescript'], missingSkills: ['react'], components: { skills: 30, location: 10 } });
    expect(matches[1].reasons).toContain('The role is remote');
    expect(best.job).toMatchObject({ title: 'Backend Engineer', status: 'OPEN', location: 'Leeds', remote: false });
    expect(best.posting).toBeUndefined();
  });

  it('ranks members for a posting, with the same score the other direction gives', async () => {
    const result = await ok(key, 'GET', `/jobs/match?jobId=${backend.id}`, undefined);
    const matches = result.candidateMatches.data;
    expect(matches.map((m: Json) => m.candidate.id)).toEqual([ada.id, bob.id]);
    expect(matches[0].candidate).toEqual({ id: ada.id, name: 'Ada', email: ada.email, headline: 'Backend engineer building payment APIs', skills: ['typescript', 'postgresql', 'graphql'], location: 'Leeds, GB' });
    expect(matches[0].member).toBeUndefined();
    const forward = (await ok(key, 'GET', `/jobs/match?memberId=${ada.id}`, undefined)).jobMatches.data[0];
    expect(matches[0]).toMatchObject({ score: forward.score, components: forward.components, matchedSkills: forward.matchedSkills, missingSkills: forward.missingSkills });
    expect(matches[1]).toMatchObject({ matchedSkills: ['typescript'], components: { location: 0 } });
    expect(matches[1].reasons).toContain('Located in Berlin, DE, the role is in Leeds');
  });

  it('pages a ranking with limit and the cursor', async () => {
    const first = (await ok(key, 'GET', `/jobs/match?jobId=${frontend.id}&limit=1`, undefined)).candidateMatches;
    expect(first.data).toHaveLength(1);
    expect(first.hasMore).toBe(true);
    const second = (await ok(key, 'GET', `/jobs/match?jobId=${frontend.id}&limit=1&after=${encodeURIComponent(first.nextCursor)}`, undefined)).candidateMatches;
    expect(second.data).toHaveLength(1);
    expect(second.data[0].candidate.id).not.toBe(first.data[0].candidate.id);
  });

  it('answers 400 match_subject_required without memberId and jobId, or with both', async () => {
    for (const query of ['', `?memberId=${ada.id}&jobId=${backend.id}`]) {
      const result = await call(key, 'GET', `/jobs/match${query}`);
      expect(result.status).toBe(400);
      expect(result.body.error.code).toBe('match_subject_required');
    }
  });

  it("answers 404 for another account's posting and for the test key of the same account", async () => {
    const stranger = await platform.issueKey(`match-stranger-${++counter}`, 'live');
    const result = await call(stranger, 'GET', `/jobs/match?jobId=${backend.id}`);
    expect(result.status).toBe(404);
    expect(result.body.error.code).toBe('job_posting_not_found');
    // Nor is another account's member (or mode's) ranked: membership does not see it.
    const testKey = await platform.issueKey(key === stranger ? 'x' : accountOf.get(key)!, 'test');
    for (const other of [stranger, testKey]) {
      const foreign = await call(other, 'GET', `/jobs/match?memberId=${ada.id}`);
      expect(foreign.status, JSON.stringify(foreign.body)).toBe(404);
      expect(foreign.body.error).toMatchObject({ code: 'member_not_found', param: 'memberId' });
      const job404 = await call(other, 'GET', `/jobs/match?jobId=${backend.id}`);
      expect(job404.status).toBe(404);
    }
  });

  it('serves the same ranking through GraphQL', async () => {
    const response = await platform.request('/graphql', {
      method: 'POST',
      key,
      json: { query: 'query($id: ID!) { jobMatches(memberId: $id, limit: 1) { ... on MatchingMember { jobMatches { data { score posting { id } } } } } }', variables: { id: ada.id } },
    });
    const body = (await response.json()) as Json;
    expect(body.errors).toBeUndefined();
    expect(body.data.jobMatches.jobMatches.data.map((m: Json) => m.posting.id)).toEqual([backend.id]);
  });
});

describe('ranking agrees with the scoring module', () => {
  it('orders exactly as rawScore would', async () => {
    const { rawScore } = await import('../../../subgraphs/shared/match-score.js');
    const key = await platform.issueKey(`match-agree-${++counter}`, 'live');
    const poster = await member(key, 'Poster', {});
    const posting = await job(key, poster.id, { title: 'Data engineer', description: 'Pipelines in Python and SQL.', skills: ['python', 'sql', 'airflow', 'dbt'], location: 'Paris' });
    const skillsets = [['python'], ['python', 'sql'], ['python', 'sql', 'airflow'], ['sql', 'dbt'], ['airflow']];
    for (const [i, skills] of skillsets.entries()) await member(key, `Cand${i}`, { skills, headline: i % 2 ? 'Data engineer' : 'Analyst', city: i < 2 ? 'Paris' : 'Lyon' });
    const matches = (await ok(key, 'GET', `/jobs/match?jobId=${posting.id}`, undefined)).candidateMatches.data as Json[];
    expect(matches).toHaveLength(5);
    const scores = matches.map((m) => m.components.skills + m.components.text + m.components.location);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    for (const m of matches) {
      const expected = rawScore({ requiredSkills: posting.skills, candidateSkills: m.candidate.skills, textRank: (m.components.text / 30) * 0.1, postingLocation: 'Paris', remote: false, candidateLocation: m.candidate.location });
      expect(Math.abs(expected - (m.components.skills + m.components.text + m.components.location))).toBeLessThan(0.2);
    }
  });
});

