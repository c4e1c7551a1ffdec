import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

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
const freshKey = (kind: 'live' | 'test' = 'live', account = `apply-${++counter}`) => platform.issueKey(account, kind);

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

async function setup(kind: 'live' | 'test' = 'live', account?: string) {
  const key = await freshKey(kind, account);
  const poster = await ok(key, 'POST', '/members', { name: 'Poster', email: `poster${++counter}@example.org` }, 201);
  const applicant = await ok(key, 'POST', '/members', { name: 'Ada Lovelace', email: `ada${++counter}@example.org`, headline: 'Backend engineer', skills: [' TypeScript', 'postgresql', 'typescript'] }, 201);
  const job = await ok(key, 'POST', '/jobs', { title: 'Backend Engineer', description: 'Build APIs in TypeScript on PostgreSQL.', location: 'Leeds', postedBy: poster.id, skills: ['TypeScript', 'PostgreSQL', 'GraphQL'], remote: false, employmentType: 'FULL_TIME', salaryMin: 50000, salaryMax: 70000, salaryCurrency: 'gbp' }, 201);
  return { key, poster, applicant, job };
}

describe('job postings: lifecycle and fields', () => {
  it('stores normalised skills, salary range and currency, and opens by default', async () => {
    const { job, applicant } = await setup();
    expect(job).toMatchObject({ status: 'OPEN', skills: ['typescript', 'postgresql', 'graphql'], remote: false, employmentType: 'FULL_TIME', salaryMin: 50000, salaryMax: 70000, salaryCurrency: 'GBP', closesAt: null });
    expect(applicant.skills).toEqual(['typescript', 'postgresql']);
    expect(applicant.headline).toBe('Backend engineer');
  });

  it('refuses a salary without currency and a min above max (400 invalid_parameter)', async () => {
    const { key, poster } = await setup();
    const a = await call(key, 'POST', '/jobs', { title: 'T', description: 'd', postedBy: poster.id, salaryMin: 10 });
    expect(a.status).toBe(400);
    expect(a.body.error).toMatchObject({ code: 'invalid_parameter', param: 'salaryCurrency' });
    const b = await call(key, 'POST', '/jobs', { title: 'T', description: 'd', postedBy: poster.id, salaryMin: 10, salaryMax: 5, salaryCurrency: 'EUR' });
    expect(b.body.error).toMatchObject({ code: 'invalid_parameter', param: 'salaryMin' });
  });

  it('draft → open → closed, each change audited; illegal moves are 409', async () => {
    const { key, poster } = await setup();
    const draft = await ok(key, 'POST', '/jobs', { title: 'Draft', description: 'd', postedBy: poster.id, status: 'DRAFT' }, 201);
    expect(draft.status).toBe('DRAFT');
    const applyDraft = await call(key, 'POST', `/jobs/${draft.id}/apply`, { name: 'Out Sider', email: 'out@example.org' });
    expect(applyDraft.status).toBe(409);
    expect(applyDraft.body.error.code).toBe('job_posting_not_open');
    expect((await ok(key, 'POST', `/jobs/${draft.id}/publish`, {}, 200)).status).toBe('OPEN');
    expect((await ok(key, 'POST', `/jobs/${draft.id}/close`, { reason: 'budget' }, 200)).status).toBe('CLOSED');
    const again = await call(key, 'POST', `/jobs/${draft.id}/publish`, {});
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('illegal_job_posting_transition');
    const rows = await db.query(`select "from", "to", reason from marketplace.marketplace_audit where subject_id = $1 order by created_at`, [draft.id]);
    expect(rows.rows).toEqual([
      { from: null, to: 'draft', reason: null },
      { from: 'draft', to: 'open', reason: null },
      { from: 'open', to: 'closed', reason: 'budget' },
    ]);
  });

  it('a posting past its closing date reads as closed and takes no applications', async () => {
    const { key, job } = await setup();
    await db.query(`update marketplace.job_posting set closes_at = now() - interval '1 minute' where id = $1`, [job.id]);
    expect((await ok(key, 'GET', `/jobs/${job.id}`, undefined, 200)).status).toBe('CLOSED');
    const late = await call(key, 'POST', `/jobs/${job.id}/apply`, { name: 'Late', email: 'late@example.org' });
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: 'job_posting_not_open' });
    expect((await db.query('select count(*)::int as n from marketplace.job_application where job_posting_id = $1', [job.id])).rows[0].n).toBe(0);
  });
});

describe('POST /jobs/{id}/apply', () => {
  it('a member applies (201); a second active application is 409 naming the first', async () => {
    const { key, job, applicant } = await setup();
    const first = await ok(key, 'POST', `/jobs/${job.id}/apply`, { memberId: applicant.id, coverLetter: 'I build APIs', answers: [{ question: 'Notice?', answer: '1 month' }], resumeText: 'TypeScript and PostgreSQL for 5 years' }, 201);
    expect(first).toMatchObject({ status: 'ACTIVE', stage: 'APPLIED', coverLetter: 'I build APIs', answers: [{ question: 'Notice?', answer: '1 month' }], livemode: true });
    expect(first.member).toMatchObject({ id: applicant.id, name: 'Ada Lovelace' });
    const second = await call(key, 'POST', `/jobs/${job.id}/apply`, { memberId: applicant.id });
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({ code: 'application_exists', existing_id: first.id });
    const gql = await platform.request('/graphql', { method: 'POST', key, json: { query: 'mutation($id: ID!, $m: ID) { applyToJob(id: $id, memberId: $m) { id } }', variables: { id: job.id, m: applicant.id } } });
    const result = (await gql.json()) as Json;
    expect(result.errors[0].extensions).toMatchObject({ code: 'CONFLICT', reason: 'application_exists', existingId: first.id });
  });

  it('an outside candidate applies by name and email; the email decides duplicates whatever its case', async () => {
    const { key, job } = await setup();
    const first = await ok(key, 'POST', `/jobs/${job.id}/apply`, { name: 'Grace Hopper', email: 'Grace@Example.org', resumeDocumentId: '00000000-0000-4000-8000-000000000001' }, 201);
    expect(first).toMatchObject({ candidateName: 'Grace Hopper', candidateEmail: 'grace@example.org', member: null, resumeDocumentId: '00000000-0000-4000-8000-000000000001' });
    const dup = await call(key, 'POST', `/jobs/${job.id}/apply`, { name: 'G. Hopper', email: 'GRACE@example.org' });
    expect(dup.body.error).toMatchObject({ code: 'application_exists', existing_id: first.id });
  });

  it('lets exactly one of concurrent applications of one candidate in; the others name it', async () => {
    const { key, job } = await setup();
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => call(key, 'POST', `/jobs/${job.id}/apply`, { name: `Racer ${i}`, email: i % 2 ? 'RACER@example.org' : 'racer@example.org' })));
    const created = results.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    for (const refused of results.filter((r) => r.status !== 201)) {
      expect(refused.status).toBe(409);
      expect(refused.body.error).toMatchObject({ code: 'application_exists', existing_id: created[0].body.id });
    }
    expect((await db.query(`select count(*)::int as n from marketplace.job_application where job_posting_id = $1`, [job.id])).rows[0].n).toBe(1);
  });

  it('refuses an applicant who is neither a member nor named, and both kinds at once (400)', async () => {
    const { key, job, applicant } = await setup();
    expect((await call(key, 'POST', `/jobs/${job.id}/apply`, { email: 'x@example.org' })).body.error).toMatchObject({ code: 'invalid_parameter', param: 'name' });
    expect((await call(key, 'POST', `/jobs/${job.id}/apply`, { memberId: applicant.id, name: 'X', email: 'x@example.org' })).body.error).toMatchObject({ code: 'invalid_parameter', param: 'memberId' });
  });

  it("answers 404 for another account's posting and for the test key of the same account", async () => {
    const account = `apply-scope-${++counter}`;
    const { job } = await setup('live', account);
    const testKey = await freshKey('test', account);
    const stranger = await freshKey();
    for (const key of [testKey, stranger]) {
      const result = await call(key, 'POST', `/jobs/${job.id}/apply`, { name: 'N', email: 'n@example.org' });
      expect(result.status).toBe(404);
      expect(result.body.error.code).toBe('job_posting_not_found');
    }
  });
});

describe('application lifecycle', () => {
  it('moves through stages, keeps a trail, and only active applications move', async () => {
    const { key, job, applicant } = await setup();
    const app = await ok(key, 'POST', `/jobs/${job.id}/apply`, { memberId: applicant.id }, 201);
    await ok(key, 'POST', `/job-applications/${app.id}/move`, { stage: 'SCREENING' }, 200);
    await ok(key, 'POST', `/job-applications/${app.id}/move`, { stage: 'INTERVIEW' }, 200);
    const rejected = await ok(key, 'POST', `/job-applications/${app.id}/reject`, { reason: 'Not enough GraphQL' }, 200);
    expect(rejected).toMatchObject({ status: 'REJECTED', stage: 'INTERVIEW', rejectionReason: 'Not enough GraphQL' });
    const frozen = await call(key, 'POST', `/job-applications/${app.id}/move`, { stage: 'OFFER' });
    expect(frozen.status).toBe(409);
    expect(frozen.body.error.code).toBe('application_not_active');
    const withdraw = await call(key, 'POST', `/job-applications/${app.id}/withdraw`, {});
    expect(withdraw.body.error.code).toBe('application_not_active');
    const gql = await platform.request('/graphql', { method: 'POST', key, json: { query: 'query($id: ID!) { jobApplication(id: $id) { trail { from to reason actor at } } }', variables: { id: app.id } } });
    const trail = ((await gql.json()) as Json).data.jobApplication.trail;
    expect(trail.map((t: Json) => [t.from, t.to, t.reason])).toEqual([
      [null, 'active.applied', null],
      ['active.applied', 'active.screening', null],
      ['active.screening', 'active.interview', null],
      ['active.interview', 'rejected.interview', 'Not enough GraphQL'],
    ]);
    expect(trail.every((t: Json) => typeof t.actor === 'string' && t.actor.length > 0 && !Number.isNaN(Date.parse(t.at)))).toBe(true);
    // After a rejection the candidate may apply again: the rule is one ACTIVE application.
    await ok(key, 'POST', `/jobs/${job.id}/apply`, { memberId: applicant.id }, 201);
  });

  it('hiring with fillPosting fills the posting in the same transaction, audited', async () => {
    const { key, job, applicant } = await setup();
    const app = await ok(key, 'POST', `/jobs/${job.id}/apply`, { memberId: applicant.id }, 201);
    const hired = await ok(key, 'POST', `/job-applications/${app.id}/hire`, { fillPosting: true }, 200);
    expect(hired.status).toBe('HIRED');
    expect((await ok(key, 'GET', `/jobs/${job.id}`, undefined, 200)).status).toBe('FILLED');
    const audit = await db.query(`select subject_type, "from", "to" from marketplace.marketplace_audit where subject_id = any($1::uuid[]) order by created_at`, [[app.id, job.id]]);
    expect(audit.rows).toEqual(expect.arrayContaining([
      { subject_type: 'job_application', from: 'active.applied', to: 'hired.applied' },
      { subject_type: 'job_posting', from: 'open', to: 'filled' },
    ]));
    const late = await call(key, 'POST', `/jobs/${job.id}/apply`, { name: 'After', email: 'after@example.org' });
    expect(late.body.error.code).toBe('job_posting_not_open');
  });
});

describe('GET /jobs/{id}/applicants', () => {
  it('lists applications with filters, cursor paging and a match score; 404 to anyone else', async () => {
    const account = `applicants-${++counter}`;
    const { key, job, applicant } = await setup('live', account);
    const a1 = await ok(key, 'POST', `/jobs/${job.id}/apply`, { memberId: applicant.id, skills: ['TypeScript', 'PostgreSQL', 'GraphQL'], resumeText: 'Backend engineer: TypeScript, PostgreSQL, GraphQL APIs' }, 201);
    const a2 = await ok(key, 'POST', `/jobs/${job.id}/apply`, { name: 'Pat', email: 'pat@example.org', resumeText: 'Gardener' }, 201);
    const a3 = await ok(key, 'POST', `/jobs/${job.id}/apply`, { name: 'Sam', email: 'sam@example.org', coverLetter: 'I know graphql' }, 201);
    await ok(key, 'POST', `/job-applications/${a3.id}/move`, { stage: 'SCREENING' }, 200);

    const all = await ok(key, 'GET', `/jobs/${job.id}/applicants`, undefined, 200);
    expect(all.data.map((a: Json) => a.id)).toEqual([a3.id, a2.id, a1.id]);
    const byId = new Map(all.data.map((a: Json) => [a.id, a]));
    expect((byId.get(a1.id) as Json).match).toMatchObject({ matchedSkills: ['typescript', 'postgresql', 'graphql'], missingSkills: [], components: { skills: 60 } });
    expect((byId.get(a1.id) as Json).match.score).toBeGreaterThan((byId.get(a2.id) as Json).match.score);
    expect((byId.get(a3.id) as Json).match.matchedSkills).toEqual(['graphql']);
    expect((byId.get(a2.id) as Json).match.reasons[0]).toBe('Has none of the 3 skills asked for');

    const screening = await ok(key, 'GET', `/jobs/${job.id}/applicants?stage=SCREENING`, undefined, 200);
    expect(screening.data.map((a: Json) => a.id)).toEqual([a3.id]);
    const page1 = await ok(key, 'GET', `/jobs/${job.id}/applicants?limit=2`, undefined, 200);
    expect(page1.hasMore).toBe(true);
    const page2 = await ok(key, 'GET', `/jobs/${job.id}/applicants?limit=2&after=${encodeURIComponent(page1.nextCursor)}`, undefined, 200);
    expect(page2.data.map((a: Json) => a.id)).toEqual([a1.id]);

    for (const other of [await freshKey('test', account), await freshKey()]) {
      const hidden = await call(other, 'GET', `/jobs/${job.id}/applicants`);
      expect(hidden.status).toBe(404);
      expect(hidden.body.error.code).toBe('job_posting_not_found');
    }
  });
});
