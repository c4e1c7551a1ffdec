/**
 * bench/membership: members and finance at scale. Generates BENCH_MEMBERS members (100,000) and
 * BENCH_PAYMENTS payments (1,000,000) on their invoices in one account, then measures p50/p99 of
 * a filtered GET /members page and of GET /finance/reports for a year, each through the REST
 * bridge (edge, gateway, subgraph) and as the same result computed by one direct SQL query.
 * Run on demand: `npm run bench:membership` (BENCH_MEMBERS, BENCH_PAYMENTS, BENCH_SAMPLES,
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
import { REPORT_SQL } from '../subgraphs/membership/finance/report/report.service.js';
import { measure, percentile } from './bench-platform.js';

const members = Number(process.env.BENCH_MEMBERS ?? 100_000);
const payments = Number(process.env.BENCH_PAYMENTS ?? 1_000_000);
const samples = Number(process.env.BENCH_SAMPLES ?? 200);
const reportSamples = Number(process.env.BENCH_REPORT_SAMPLES ?? 30);

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-membership-'));
const config = {
  ...loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', EMBEDDED_PG_PORT: process.env.EMBEDDED_PG_PORT ?? '5497' }),
  port: 0,
  host: '127.0.0.1',
  subgraphPorts: { membership: 0, marketplace: 0, inference: 0, traceroute: 0 },
  // A bench measures latency, not the per-key limit.
  rateLimits: { ...loadConfig({}).rateLimits, livePerMinute: 10_000_000 },
};
const database = await openPlatformDatabase({ databaseUrl: config.databaseUrl, dataDir, embeddedPort: config.embeddedDatabasePort });
const platform = await startPlatform(config, database.url, createLogger('silent'));
const identityOrm = await openIdentityStore(database.url);
const sql = new pg.Client({ connectionString: database.url });
await sql.connect();

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
  await sql.query('begin');
  const categories = (
    await sql.query<{ id: string }>(
      `insert into membership.member_category (id, account_id, mode, name, fee_amount, currency, period, renewal_basis, grace_days, created_at)
       select gen_random_uuid(), $1, 'live', n, fee, 'EUR', 'yearly', 'rolling', 30, now()
         from (values ('Regular', 12000), ('Student', 4000), ('Senior', 6000)) v(n, fee) returning id`,
      [accountId],
    )
  ).rows.map((r) => r.id);
  await sql.query(
    `insert into membership.member (id, account_id, mode, name, email, joined_on, period_start, period_end, grace_ends_on, state, category_id, created_at, updated_at)
     select gen_random_uuid(), $1, 'live', initcap(substr(md5(i::text), 1, 8)) || ' ' || initcap(substr(md5((i * 7)::text), 1, 10)),
            'member' || i || '@example.org', d, d, (d + 364), (d + 364 + 30),
            case when i % 50 = 0 then 'suspended' when i % 97 = 0 then 'pending' when i % 199 = 0 then 'cancelled' else 'current' end,
            ($2::uuid[])[1 + i % 3], now() - make_interval(secs => i), now()
       from generate_series(1, $3::int) i, lateral (select current_date - (random() * 800)::int + (i * 0) as d) x`,
    [accountId, categories, members],
  );
  await sql.query('create temp table bench_member as select id, category_id, row_number() over (order by created_at) as rn from membership.member where account_id = $1', [accountId]);
  const invoices = Math.ceil(payments / 4);
  // Invoices paid in four payments of 3,000: 12,000 (paid), or 15,000 for every tenth (still open, 3,000 owed).
  await sql.query(
    `create temp table bench_invoice as
     select gen_random_uuid() as id, i, m.id as member_id, m.category_id, current_date - (random() * 730)::int as issued_on
       from generate_series(1, $1::int) i join bench_member m on m.rn = 1 + (i * 7919) % $2::int`,
    [invoices, members],
  );
  await sql.query(
    `insert into membership.invoice (id, account_id, mode, number, member_id, category_id, kind, status, currency, lines, total, amount_paid, amount_refunded, issued_on, due_on, paid_at, created_at, updated_at)
     select id, $1, 'live', 'INV-' || lpad(i::text, 7, '0'), member_id, category_id, 'renewal',
            case when i % 10 = 0 then 'open' else 'paid' end, 'EUR',
            jsonb_build_array(jsonb_build_object('description', 'Membership', 'quantity', 1, 'unitAmount', t.total, 'amount', t.total)), t.total,
            12000, 0, issued_on, issued_on + 30,
            case when i % 10 = 0 then null else now() end, issued_on::timestamp at time zone 'UTC', now()
       from bench_invoice, lateral (select case when i % 10 = 0 then 15000 else 12000 end as total) t`,
    [accountId],
  );
  await sql.query(`insert into membership.invoice_sequence (account_id, mode, last_number) values ($1, 'live', $2)`, [accountId, invoices]);
  await sql.query(
    `insert into membership.payment (id, account_id, mode, invoice_id, member_id, category_id, amount, currency, method, received_at, amount_refunded, created_at)
     select gen_random_uuid(), $1, 'live', v.id, v.member_id, v.category_id, 3000, 'EUR', 'card',
            (v.issued_on + k * 7)::timestamp at time zone 'UTC' + make_interval(hours => (v.i + k) % 24), 0, now()
       from bench_invoice v, generate_series(0, 3) k
      where (v.i - 1) * 4 + k < $2::int`,
    [accountId, payments],
  );
  await sql.query(
    `insert into membership.refund (id, account_id, mode, payment_id, invoice_id, member_id, category_id, amount, currency, reason, created_at)
     select gen_random_uuid(), account_id, mode, id, invoice_id, member_id, category_id, 1000, currency, 'bench', received_at + interval '3 days'
       from membership.payment where account_id = $1 and abs(hashtext(id::text)) % 100 = 0`,
    [accountId],
  );
  await sql.query(`update membership.payment p set amount_refunded = 1000 from membership.refund r where r.payment_id = p.id and p.account_id = $1`, [accountId]);
  await sql.query(
    `update membership.invoice i set amount_refunded = s.total, status = case when i.status = 'paid' then 'open' else i.status end, paid_at = null
       from (select invoice_id, sum(amount) as total from membership.refund where account_id = $1 group by invoice_id) s where s.invoice_id = i.id`,
    [accountId],
  );
  await sql.query('commit');
  await sql.query('analyze membership.member, membership.invoice, membership.payment, membership.refund');
  const counts = (await sql.query(`select (select count(*) from membership.member where account_id = $1) as members, (select count(*) from membership.payment where account_id = $1) as payments, (select count(*) from membership.invoice where account_id = $1) as invoices, (select count(*) from membership.refund where account_id = $1) as refunds`, [accountId])).rows[0];
  console.log(`\ngenerated ${counts.members} members, ${counts.invoices} invoices, ${counts.payments} payments, ${counts.refunds} refunds in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const today = new Date().toISOString().slice(0, 10);
  const year = String(new Date().getUTCFullYear() - 1);
  const from = `${year}-01-01`;
  const to = `${year}-12-31`;
  const category = categories[0];

  const rest = async (url: string) => {
    const response = await fetch(`${platform.baseUrl}/api/v1${url}`, { headers });
    if (response.status !== 200) throw new Error(`${url}: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
  };
  const memberPages = [
    {
      name: 'status=ACTIVE&categoryId, newest first',
      url: `/members?status=ACTIVE&categoryId=${category}&limit=50`,
      sql: `select * from membership.member where account_id = $1 and mode = 'live' and deleted_at is null and state = 'current'
              and (period_end is null or period_end >= $2) and category_id = $3 order by created_at desc, id desc limit 51`,
      params: [accountId, today, category],
    },
    {
      name: 'status=GRACE, sort=NAME_ASC',
      url: '/members?status=GRACE&sort=NAME_ASC&limit=50',
      sql: `select * from membership.member where account_id = $1 and mode = 'live' and deleted_at is null and state = 'current'
              and period_end < $2 and grace_ends_on >= $2 order by name asc, id asc limit 51`,
      params: [accountId, today],
    },
    {
      name: 'search=ab&expiring next 90 days',
      url: `/members?search=ab&expiringFrom=${today}&expiringTo=${new Date(Date.now() + 90 * 86_400_000).toISOString().slice(0, 10)}&limit=50`,
      sql: `select * from membership.member where account_id = $1 and mode = 'live' and deleted_at is null
              and (name ilike '%ab%' or email ilike '%ab%') and period_end >= $2 and period_end <= $3 order by created_at desc, id desc limit 51`,
      params: [accountId, today, new Date(Date.now() + 90 * 86_400_000).toISOString().slice(0, 10)],
    },
  ];
  const rows: { name: string; rest: { p50: number; p99: number }; direct: { p50: number; p99: number } }[] = [];
  for (const page of memberPages) {
    rows.push({
      name: `GET /members ${page.name}`,
      rest: await measure(samples, () => rest(page.url)),
      direct: await measure(samples, async () => void (await sql.query(page.sql, page.params))),
    });
  }
  const reportParams = [from, to, from, to, today, accountId, 'live', accountId, 'live', accountId, 'live'];
  rows.push({
    name: `GET /finance/reports ${year}`,
    rest: await measure(reportSamples, () => rest(`/finance/reports?from=${from}&to=${to}`)),
    direct: await measure(reportSamples, async () => void (await sql.query(numbered(REPORT_SQL), reportParams))),
  });

  console.log(`\nmembership bench: ${counts.members} members, ${counts.payments} payments; ${samples} samples per member page, ${reportSamples} per report; one request at a time; node ${process.version}\n`);
  console.log('request                                                REST p50   REST p99    SQL p50    SQL p99   ratio p50  ratio p99');
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(52)}${r.rest.p50.toFixed(1).padStart(10)}${r.rest.p99.toFixed(1).padStart(11)}${r.direct.p50.toFixed(1).padStart(11)}${r.direct.p99.toFixed(1).padStart(11)}${(r.rest.p50 / r.direct.p50).toFixed(2).padStart(11)}${(r.rest.p99 / r.direct.p99).toFixed(2).padStart(11)}`,
    );
  }
  console.log('\n(ms; "SQL" is the same result from one direct query on a warm connection, without JSON over HTTP)\n');
} finally {
  await sql.end();
  await identityOrm.close();
  await platform.stop();
  await database.stop();
  await rm(dataDir, { recursive: true, force: true });
}
