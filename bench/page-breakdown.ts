/**
 * bench/page-breakdown: where the time of a cheap REST page goes (GET /api/v1/members?limit=20,
 * the page bench/gateway-overhead holds to 5× its SQL). One request at a time, each of:
 *   - REST through fetch (as gateway-overhead times it) and through node:http with keep-alive
 *     (the client's own cost: undici's fetch adds its WHATWG layers to every call);
 *   - the GraphQL query the REST bridge sends, at the edge's /graphql and at the subgraph directly;
 *   - the same rows in one SQL statement.
 * The differences are the layers: REST − edge GraphQL is the bridge, edge − direct the edge and
 * gateway, direct − SQL the subgraph (HTTP, Apollo Server, graphql-js, MikroORM).
 * PAGE_PROFILE=<target name> records a CPU profile of that target instead (PAGE_PROFILE_OUT,
 * default page.cpuprofile; docs/profiling.md). Run on demand: `npm run bench:page-breakdown`
 * (PAGE_SAMPLES, default 500, two rounds).
 */
import http from 'node:http';
import pg from 'pg';
import { PRINCIPAL_HEADER, signPrincipal } from '../core/principal.js';
import { COMPILED, measure, MEMBER_PAGE_SQL, profileWhile, startBenchPlatform } from './bench-platform.js';

const samples = Number(process.env.PAGE_SAMPLES ?? 500);
const profileTarget = process.env.PAGE_PROFILE;
/** What the REST bridge asks the graph for GET /members?limit=20 (every field of a member, its category expanded). */
const PAGE_QUERY = `{ members(limit: 20) { data { id name email phone addressLine1 addressLine2 city region postalCode country headline skills customFields
  categoryId joinedOn periodStart periodEnd graceEndsOn createdAt updatedAt location livemode status
  category { id name feeAmount currency period periodYears renewalBasis fixedMonth fixedDay graceDays createdAt livemode } } hasMore nextCursor } }`;

const bench = await startBenchPlatform('page-breakdown');
const { platform, key, config } = bench;
const auth = { authorization: `Bearer ${key.secret}` };
const sql = new pg.Client({ connectionString: bench.databaseUrl });
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One request over node:http with a kept-alive socket; rejects on anything but 200. */
function request(url: string, headers: Record<string, string>, body?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { agent, method: body ? 'POST' : 'GET', headers: body ? { ...headers, 'content-type': 'application/json' } : headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        if (res.statusCode === 200 && !text.includes('"errors"')) resolve(text);
        else reject(new Error(`${url} answered ${res.statusCode}: ${text.slice(0, 300)}`));
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

try {
  await sql.connect();
  for (let i = 0; i < 21; i++) {
    const created = await fetch(`${platform.baseUrl}/api/v1/members`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: `Page Member ${i}`, email: `page${i}@example.org` }) });
    if (created.status !== 201) throw new Error(`POST /members: ${created.status} ${await created.text()}`);
  }
  const restUrl = `${platform.baseUrl}/api/v1/members?limit=20`;
  const graphql = JSON.stringify({ query: PAGE_QUERY });
  const targets: [string, () => Promise<unknown>][] = [
    ['REST, fetch', async () => {
      const response = await fetch(restUrl, { headers: auth });
      if (response.status !== 200) throw new Error(`GET /members: ${response.status}`);
      await response.arrayBuffer();
    }],
    ['REST, node:http', () => request(restUrl, auth)],
    ['edge GraphQL', () => request(platform.graphqlUrl, auth, graphql)],
    // Signed once: a run is far shorter than the five minutes a signature is accepted for.
    ['subgraph directly', () => request(platform.subgraphUrls.membership, { [PRINCIPAL_HEADER]: signPrincipal(key.principal, config.internalSecret) }, graphql)],
    ['SQL', () => sql.query(MEMBER_PAGE_SQL, [key.principal.accountId])],
  ];
  // The same rows from every target before anything is timed.
  const rest = JSON.parse(await request(restUrl, auth)) as { data: { id: string }[] };
  const viaGraph = JSON.parse(await request(platform.graphqlUrl, auth, graphql)) as { data: { members: { data: { id: string }[] } } };
  if (rest.data.length !== 20 || rest.data.map((m) => m.id).join() !== viaGraph.data.members.data.map((m) => m.id).join()) throw new Error('REST and GraphQL pages differ');

  if (profileTarget) {
    const target = targets.find(([name]) => name === profileTarget);
    if (!target) throw new Error(`PAGE_PROFILE must name a target: ${targets.map(([name]) => name).join(', ')}`);
    for (let i = 0; i < 300; i++) await target[1]();
    const out = process.env.PAGE_PROFILE_OUT ?? 'page.cpuprofile';
    const timed = await profileWhile(out, () => measure(samples, async () => void (await target[1]())), 100);
    console.log(`profile of ${profileTarget} written to ${out} (p50 ${timed.p50.toFixed(2)} ms while profiled)`);
  } else {
    console.log(`\npage-breakdown: GET /api/v1/members?limit=20 and its layers, one at a time, ${samples} samples a round, ${COMPILED ? 'compiled JavaScript' : 'under tsx'}, node ${process.version}\n`);
    console.log('target                 round   p50 ms   p99 ms');
    for (let round = 1; round <= 2; round++) {
      for (const [name, run] of targets) {
        const timed = await measure(samples, async () => void (await run()));
        console.log(`${name.padEnd(22)}${String(round).padStart(6)}${timed.p50.toFixed(2).padStart(9)}${timed.p99.toFixed(2).padStart(9)}`);
      }
    }
    console.log('\nThe second round is the steady state; the first includes the JIT warming each path.\n');
  }
} finally {
  await sql.end().catch(() => {});
  agent.destroy();
  await bench.stop();
}
