/**
 * bench/edge-profile: load for a CPU profile of the edge. Starts the platform in this process
 * (edge and subgraphs), then drives the member lookup at /graphql (PROFILE_TARGET=rest for
 * GET /api/v1/members/{id}, PROFILE_TARGET=direct for the membership subgraph without the edge) for PROFILE_SECONDS (10) at PROFILE_CONNECTIONS (10), recording a V8
 * CPU profile of this process over the load only (start-up would swamp it) to PROFILE_OUT
 * (edge.cpuprofile). How to run and read it: docs/profiling.md.
 */
import autocannon from 'autocannon';
import { PRINCIPAL_HEADER, signPrincipal } from '../core/principal.js';
import { profileWhile, startBenchPlatform } from './bench-platform.js';

const seconds = Number(process.env.PROFILE_SECONDS ?? 10);
const connections = Number(process.env.PROFILE_CONNECTIONS ?? 10);
const bench = await startBenchPlatform('edge-profile', { subgraphQueryDeduplication: false });
try {
  const auth = { authorization: `Bearer ${bench.key.secret}` };
  const created = await fetch(`${bench.platform.baseUrl}/api/v1/members`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Profile Member', email: 'profile@example.org' }),
  });
  const { id } = (await created.json()) as { id: string };
  const body = JSON.stringify({ query: 'query($id: ID!) { member(id: $id) { id name email status periodEnd } }', variables: { id } });
  const request =
    process.env.PROFILE_TARGET === 'rest'
      ? { url: `${bench.platform.baseUrl}/api/v1/members/${id}`, method: 'GET' as const, headers: auth }
      : process.env.PROFILE_TARGET === 'direct'
        ? {
            url: bench.platform.subgraphUrls.membership,
            method: 'POST' as const,
            headers: { 'content-type': 'application/json', [PRINCIPAL_HEADER]: signPrincipal(bench.key.principal, bench.config.internalSecret) },
            body,
          }
        : { url: bench.platform.graphqlUrl, method: 'POST' as const, headers: { ...auth, 'content-type': 'application/json' }, body };
  await autocannon({ ...request, connections, duration: 2, workers: 1 });
  const out = process.env.PROFILE_OUT ?? 'edge.cpuprofile';
  const result = await profileWhile(out, () => autocannon({ ...request, connections, duration: seconds, workers: 1 }));
  console.log(`profile of the load written to ${out}`);
  console.log(`${request.method} ${request.url}: ${result.requests.average} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, failures ${result.non2xx + result.errors}`);
} finally {
  await bench.stop();
}
