/**
 * bench/edge-cpu: the edge's CPU per request, less sensitive to a busy machine than requests a
 * second. The platform runs in this process (edge and subgraphs) and autocannon in a worker
 * thread of it; the same member lookup is sent to the membership subgraph directly and through
 * the edge's /graphql, CPU_ROUNDS (5) rounds of CPU_SECONDS (3) each, taking turns, at
 * CPU_CONNECTIONS (100). Each figure is the process's user and system time over the requests
 * served, median of the rounds; edge less direct is what the edge (and its hop) costs a request.
 */
import autocannon from 'autocannon';
import { PRINCIPAL_HEADER, signPrincipal } from '../core/principal.js';
import { startBenchPlatform } from './bench-platform.js';

const seconds = Number(process.env.CPU_SECONDS ?? 3);
const rounds = Number(process.env.CPU_ROUNDS ?? 5);
const connections = Number(process.env.CPU_CONNECTIONS ?? 100);
const bench = await startBenchPlatform('edge-cpu', { subgraphQueryDeduplication: false });
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
try {
  const auth = { authorization: `Bearer ${bench.key.secret}` };
  const created = await fetch(`${bench.platform.baseUrl}/api/v1/members`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'CPU Member', email: 'cpu@example.org' }),
  });
  const { id } = (await created.json()) as { id: string };
  const body = JSON.stringify({ query: 'query($id: ID!) { member(id: $id) { id name email status periodEnd } }', variables: { id } });
  const targets = {
    direct: () => ({ url: bench.platform.subgraphUrls.membership, headers: { 'content-type': 'application/json', [PRINCIPAL_HEADER]: signPrincipal(bench.key.principal, bench.config.internalSecret) } }),
    edge: () => ({ url: bench.platform.graphqlUrl, headers: { 'content-type': 'application/json', ...auth } }),
  };
  const perRequest: Record<string, number[]> = { direct: [], edge: [] };
  const rates: Record<string, number[]> = { direct: [], edge: [] };
  for (const target of Object.values(targets)) await autocannon({ ...target(), method: 'POST', body, connections, duration: 2, workers: 1 });
  for (let round = 0; round < rounds; round++) {
    for (const [name, target] of Object.entries(targets)) {
      const before = process.cpuUsage();
      const result = await autocannon({ ...target(), method: 'POST', body, connections, duration: seconds, workers: 1 });
      const used = process.cpuUsage(before);
      if (result.non2xx || result.errors) throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      perRequest[name].push((used.user + used.system) / result.requests.total);
      rates[name].push(result.requests.average);
    }
  }
  const [direct, edge] = [median(perRequest.direct), median(perRequest.edge)];
  console.log(`CPU per request at ${connections} connections, medians of ${rounds} rounds of ${seconds} s (load generator included in both):`);
  console.log(`  direct ${direct.toFixed(0)} µs (${perRequest.direct.map((v) => v.toFixed(0)).join(', ')}), ${median(rates.direct)} req/s`);
  console.log(`  edge   ${edge.toFixed(0)} µs (${perRequest.edge.map((v) => v.toFixed(0)).join(', ')}), ${median(rates.edge)} req/s`);
  console.log(`  edge less direct ${(edge - direct).toFixed(0)} µs a request; edge / direct req/s ×${(median(rates.edge) / median(rates.direct)).toFixed(2)}`);
} finally {
  await bench.stop();
}
