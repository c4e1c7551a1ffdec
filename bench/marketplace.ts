/**
 * bench/marketplace (jobs half): explained job matching at scale. Seeds BENCH_MEMBERS members
 * (100,000) with skills, headlines and cities in the membership schema and BENCH_POSTINGS open job
 * postings (10,000) in the marketplace schema of one account, straight with SQL, then measures
 * GET /jobs/match both ways (?memberId: postings ranked for a member, the marketplace ranking with
 * the member's profile brought by federation @requires; ?jobId: members ranked for a posting,
 * membership ranking with the posting's fields brought the same way) through the real REST edge,
 * at concurrency 1 and 10, against the same ranking statement run directly on PostgreSQL.
 * Run on demand: `npm run bench:marketplace` (BENCH_MEMBERS, BENCH_POSTINGS, BENCH_SAMPLES,
 * DATABASE_URL to use a running PostgreSQL instead of a temporary embedded one).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { loadConfig } from '../platform/config.js';
import { openPlatformDatabase } from '../platform/database.js';
import { openIdentityStore } from '../identity/index.js';
import { IdentityService } from '../identity/identity.service.js';
import { createLogger } from '../core/logger.js';
import { startPlatform } from '../platform/platform.js';
import { pgArrayLiteral } from '../subgraphs/shared/match-score.js';
import { POSTING_RANKING_SQL } from '../subgraphs/marketplace/match/posting-match.service.js';
import { CANDIDATE_RANKING_SQL } from '../subgraphs/membership/member/candidate-match.service.js';
import { percentile } from './bench-platform.js';

const members = Number(process.env.BENCH_MEMBERS ?? 100_000);
const postings = Number(process.env.BENCH_POSTINGS ?? 10_000);
const samples = Number(process.env.BENCH_SAMPLES ?? 200);
const PAGE = 20;

const SKILLS = [
  'typescript', 'javascript', 'python', 'java', 'go', 'rust', 'c#', 'kotlin', 'swift', 'ruby', 'php', 'scala',
  'postgresql', 'mysql', 'redis', 'kafka', 'graphql', 'rest', 'docker', 'kubernetes', 'terraform', 'aws', 'azure', 'gcp',
  'react', 'vue', 'angular', 'node.js', 'django', 'spring', 'rails', 'linux', 'networking', 'security', 'machine learning',
  'data analysis', 'sql', 'excel', 'accounting', 'bookkeeping', 'payroll', 'marketing', 'seo', 'copywriting', 'sales',
  'negotiation', 'project management', 'scrum', 'product management', 'ux design', 'figma', 'illustration', 'photography',
  'event planning', 'fundraising', 'teaching', 'nursing', 'first aid', 'carpentry', 'electrical', 'plumbing',
];
const ROLES = ['engineer', 'developer', 'analyst', 'designer', 'manager', 'accountant', 'consultant', 'coordinator', 'specialist', 'technician', 'administrator', 'architect'];
const AREAS = ['backend', 'frontend', 'data', 'platform', 'security', 'finance', 'marketing', 'product', 'operations', 'events', 'community', 'infrastructure'];
const CITIES = ['London', 'Leeds', 'Manchester', 'Bristol', 'Berlin', 'Munich', 'Paris', 'Lyon', 'Madrid', 'Lisbon', 'Dublin', 'Amsterdam', 'Vienna', 'Zurich', 'Milan', 'Prague', 'Warsaw', 'Oslo', 'Stockholm', 'Helsinki'];

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-marketplace-'));
const config = {
  ...loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', EMBEDDED_PG_PORT: process.env.EMBEDDED_PG_PORT ?? '5511' }),
  port: 0,
  host: '127.0.0.1',
  subgraphPorts: { membership: 0, marketplace: 0, inference: 0, traceroute: 0 },
  // A bench measures latency, not the per-key limit.
  rateLimits: { ...loadConfig({}).rateLimits, livePerMinute: 10_000_000 },
};
const database = await openPlatformDatabase({ databaseUrl: config.databaseUrl, dataDir, embeddedPort: config.embeddedDatabasePort });
const platform = await startPlatform(config, database.url, createLogger('silent'));
const identityOrm = await openIdentityStore(database.url);
const sql = new pg.Pool({ connectionString: database.url, max: 10 });

/** Runs `fn(i)` `n` times over `concurrency` workers (after a warm-up) and returns p50/p99 in ms. */
async function measure(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < Math.max(5, Math.ceil(n / 10)); i++) await fn(n + i);
  const times: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const start = performance.now();
        await fn(i);
        times.push(performance.now() - start);
      }
    }),
  );
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** `?` placeholders (MikroORM's) as pg's `$n`. */
function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

try {
  const identity = new IdentityService(identityOrm.em.fork());
  const { secret } = await identity.createKey({ account: 'bench', kind: 'live' });
  const auth = await identity.authenticate(secret);
  if (!auth.ok) throw new Error('the bench key does not authenticate');
  const accountId = auth.principal.accountId;
  const headers = { authorization: `Bearer ${secret}` };

  const started = performance.now();
  // Skills: 3 to 6 of the list per row, picked by a hash of the row and slot (distinct, sorted as
  // the application would store them: normalised already).
  const pick = (row: string, count: string) =>
    `array(select distinct ($VOCAB::text[])[1 + abs(hashtext(${row}::text || ':' || k::text)) % cardinality($VOCAB::text[])] from generate_series(1, ${count}) k)`;
  await sql.query(
    `insert into membership.member (id, account_id, mode, name, email, joined_on, period_start, period_end, grace_ends_on, state, created_at, updated_at, city, country, headline, skills)
     select gen_random_uuid(), $1, 'live', 'Member ' || i, 'member' || i || '@example.org', current_date, current_date, current_date + 364, current_date + 394, 'current',
            now() - make_interval(secs => i), now(), ($3::text[])[1 + i % cardinality($3::text[])], 'EU',
            initcap(($4::text[])[1 + (i / 7) % cardinality($4::text[])]) || ' ' || ($5::text[])[1 + i % cardinality($5::text[])] || ' with ' || s[1] || ' and ' || coalesce(s[2], s[1]),
            s
       from generate_series(1, $2::int) i, lateral (select ${pick('i', '3 + i % 4').replaceAll('$VOCAB', '$6')} as s) x`,
    [accountId, members, CITIES, AREAS, ROLES, SKILLS],
  );
  const poster = (await sql.query<{ id: string }>(`select id from membership.member where account_id = $1 limit 1`, [accountId])).rows[0].id;
  await sql.query(
    `insert into marketplace.job_posting (id, account_id, mode, title, description, location, posted_by_id, created_at, skills, remote, employment_type, salary_min, salary_max, salary_currency, closes_at, state, updated_at)
     select gen_random_uuid(), $1, 'live',
            initcap(($4::text[])[1 + (i / 3) % cardinality($4::text[])]) || ' ' || ($5::text[])[1 + i % cardinality($5::text[])],
            'We are looking for a ' || ($4::text[])[1 + (i / 3) % cardinality($4::text[])] || ' ' || ($5::text[])[1 + i % cardinality($5::text[])] ||
              ' who knows ' || array_to_string(s, ', ') || '. You will work with a small team on ' || ($4::text[])[1 + (i / 11) % cardinality($4::text[])] || ' projects.',
            ($3::text[])[1 + (i / 5) % cardinality($3::text[])], $6, now() - make_interval(secs => i), s, i % 5 = 0, 'full_time', 40000, 70000, 'EUR',
            case when i % 10 = 0 then now() - interval '1 day' else now() + interval '60 days' end, 'open', now()
       from generate_series(1, $2::int) i, lateral (select ${pick('(i + 1000000)', '3 + i % 4').replaceAll('$VOCAB', '$7')} as s) x`,
    [accountId, postings, CITIES, AREAS, ROLES, poster, SKILLS],
  );
  await sql.query('analyze membership.member');
  await sql.query('analyze marketplace.job_posting');
  const counts = (await sql.query(`select (select count(*) from membership.member where account_id = $1) as members, (select count(*) from marketplace.job_posting where account_id = $1) as postings, (select count(*) from marketplace.job_posting where account_id = $1 and closes_at > now()) as open`, [accountId])).rows[0];
  console.log(`\nseeded ${counts.members} members and ${counts.postings} postings (${counts.open} open, the rest past their closing date) in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const memberRows = (await sql.query<{ id: string; skills: string[]; headline: string; location: string }>(
    `select id, skills, headline, concat_ws(', ', city, region, country) as location from membership.member where account_id = $1 order by random() limit $2`,
    [accountId, samples],
  )).rows;
  const postingRows = (await sql.query<{ id: string; title: string; skills: string[]; location: string; remote: boolean }>(
    `select id, title, skills, location, remote from marketplace.job_posting where account_id = $1 and closes_at > now() order by random() limit $2`,
    [accountId, samples],
  )).rows;

  const rest = async (url: string) => {
    const response = await fetch(`${platform.baseUrl}/api/v1${url}`, { headers });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${url}: ${response.status} ${text}`);
  };
  const postingsSql = numbered(POSTING_RANKING_SQL);
  const candidatesSql = numbered(CANDIDATE_RANKING_SQL);
  const directForMember = async (i: number) => {
    const m = memberRows[i % memberRows.length];
    const profile = `${m.headline} ${m.skills.join(' ')}`;
    await sql.query(postingsSql, [pgArrayLiteral(m.skills), profile, profile, m.location, accountId, 'live', PAGE + 1, PAGE + 1, 0]);
  };
  const directForJob = async (i: number) => {
    const p = postingRows[i % postingRows.length];
    await sql.query(candidatesSql, [pgArrayLiteral(p.skills), `${p.title} ${p.skills.join(' ')}`, p.location, p.remote, accountId, 'live', PAGE + 1, PAGE + 1, 0]);
  };
  // One look at what a client gets, so the figures are of real answers.
  const sample = await (await fetch(`${platform.baseUrl}/api/v1/jobs/match?memberId=${memberRows[0].id}&limit=3`, { headers })).json();
  console.log(`\nsample: GET /jobs/match?memberId=…&limit=3 → ${sample.jobMatches.data.map((m: { score: number; job: { title: string } }) => `${m.score} ${m.job.title}`).join(' | ')}`);

  const rows: { name: string; rest: { p50: number; p99: number }; direct: { p50: number; p99: number } }[] = [];
  for (const concurrency of [1, 10]) {
    rows.push({
      name: `GET /jobs/match?memberId (postings for a member), c=${concurrency}`,
      rest: await measure(samples, concurrency, (i) => rest(`/jobs/match?memberId=${memberRows[i % memberRows.length].id}&limit=${PAGE}`)),
      direct: await measure(samples, concurrency, directForMember),
    });
    rows.push({
      name: `GET /jobs/match?jobId (members for a posting), c=${concurrency}`,
      rest: await measure(samples, concurrency, (i) => rest(`/jobs/match?jobId=${postingRows[i % postingRows.length].id}&limit=${PAGE}`)),
      direct: await measure(samples, concurrency, directForJob),
    });
  }

  console.log(`\nmarketplace bench (jobs): ${counts.members} members, ${counts.postings} postings; ${samples} requests per row; page of ${PAGE}; node ${process.version}\n`);
  console.log('request                                                      REST p50   REST p99    SQL p50    SQL p99   ratio p50  ratio p99');
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(58)}${r.rest.p50.toFixed(1).padStart(10)}${r.rest.p99.toFixed(1).padStart(11)}${r.direct.p50.toFixed(1).padStart(11)}${r.direct.p99.toFixed(1).padStart(11)}${(r.rest.p50 / r.direct.p50).toFixed(2).padStart(11)}${(r.rest.p99 / r.direct.p99).toFixed(2).padStart(11)}`,
    );
  }
  console.log('\n(ms; "SQL" is the same ranking statement run directly on a warm pooled connection with the subject\'s fields as parameters; REST adds the edge, the gateway, the federation hop that fetches those fields, the page\'s rows and JSON over HTTP. Target: ratio at most 3)\n');
} finally {
  await sql.end();
  await identityOrm.close();
  await platform.stop();
  await database.stop();
  await rm(dataDir, { recursive: true, force: true });
}
