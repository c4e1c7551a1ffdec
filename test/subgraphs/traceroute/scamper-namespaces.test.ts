import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIdentityStore } from '../../../identity/index.js';
import { LocalKeyStore } from '../../../identity/local-key-store.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { sharedIpEnricher, type IpEnricher } from '../../../subgraphs/traceroute/enrichment/ip-enricher.js';
import { createTracerouteSubgraph } from '../../../subgraphs/traceroute/index.js';
import { readTextRecords } from '../../../subgraphs/traceroute/ingest/record-reader.js';
import { TraceImporter } from '../../../subgraphs/traceroute/ingest/trace-importer.js';
import { createTestDatabase } from '../../support/database.js';
import { principalFor, run, TEST_SECRET } from '../../support/subgraph-harness.js';
import { expectSameTrace, readScamper, TRACE_FIELDS, type Json } from './independent-reading.js';

/**
 * The importer against the real tool: the lab of scamper-lab-topology.sh (a probe, two
 * load-balanced routers, a target; unreachable, prohibited, black-holed and looping prefixes) is
 * built in network namespaces and traced with Debian's scamper, and what it prints is imported.
 * Every hop must match the independent reading of scamper's own record, and the figures the
 * topology fixes (who answers at which TTL, why each trace stops) must come out.
 */
const LAB = path.resolve(import.meta.dirname, '../../fixtures/traceroute/scamper-lab-topology.sh');
const execute = promisify(execFile);
// Our own namespace names, so that labs of runs side by side do not meet.
const PREFIX = `t33v${process.pid % 100_000}`;

function which(program: string): string | null {
  try {
    return execFileSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/** Why the lab cannot run here, or undefined when it can. In CI a missing scamper is an error: .ci/run installs it. */
function labMissing(): string | undefined {
  if (!which('scamper')) {
    if (process.env.CI) throw new Error('scamper is not on PATH: CI must install it (.ci/run installs Debian\'s scamper)');
    return 'scamper is not installed (apt-get install scamper); CI runs this test';
  }
  if (!which('ip')) return 'ip (iproute2) is not installed';
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  try {
    execFileSync('ip', ['netns', 'add', `${PREFIX}x`], { stdio: 'pipe' });
    execFileSync('ip', ['netns', 'del', `${PREFIX}x`], { stdio: 'pipe' });
  } catch (error) {
    return `network namespaces are not permitted here (${String((error as { stderr?: Buffer }).stderr ?? error).trim()})`;
  }
  return undefined;
}

const missing = labMissing();

/** What the lab is asked to trace, and what the topology says must come of it. */
const TRACES = {
  ecmp: 'trace -P udp -q 3 -Q -w 1 -s 40001 10.33.3.2',
  echo: 'trace -P icmp-paris -q 2 -w 1 10.33.3.2',
  host: 'trace -P udp-paris -q 2 -w 1 10.33.9.9',
  network: 'trace -P udp-paris -q 2 -w 1 10.33.7.7',
  prohibited: 'trace -P icmp-paris -q 2 -w 1 10.33.8.8',
  blackhole: 'trace -P udp-paris -q 2 -w 1 -g 3 10.33.6.9',
  loop: 'trace -P udp-paris -q 2 -w 1 10.33.10.10',
};

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let identityOrm: MikroORM;
let subgraph: Subgraph;
let enricher: IpEnricher;
const reader = principalFor('reader', 'traceroute');
/** scamper's record and the stored trace, by the name in TRACES. */
const traced = new Map<string, { record: Json; host: string | null; stored: Json }>();

describe.skipIf(missing)(`scamper in network namespaces${missing ? ` (skipped: ${missing})` : ''}`, () => {
  beforeAll(async () => {
    await execute('bash', [LAB], { env: { ...process.env, P: PREFIX } });
    db = await createTestDatabase();
    identityOrm = await openIdentityStore(db.url);
    subgraph = await createTracerouteSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET, keyStore: new LocalKeyStore(identityOrm) });
    enricher = await sharedIpEnricher();
    // One after the other: scampers side by side on one probe can take each other's answers.
    for (const [name, command] of Object.entries(TRACES)) {
      const { stdout: output } = await execute('ip', ['netns', 'exec', `${PREFIX}s`, 'scamper', '-O', 'json', '-I', command]);
      const report = await new TraceImporter(subgraph.orm.em.fork(), enricher).run(readTextRecords(output));
      expect(report, name).toMatchObject({ read: 1, stored: 1, skipped: [] });
      const lines = output.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Json);
      const record = lines.find((l) => l.type === 'trace')!;
      const host = lines.find((l) => l.type === 'cycle-start')?.hostname ?? null;
      const [row] = await subgraph.orm.em.getConnection().execute<{ id: string }[]>(
        `select id from "traceroute"."trace" where source_record = ?`,
        [output.split('\n').find((l) => l.includes('"type":"trace"'))],
      );
      const result = await run<{ trace: Json }>(subgraph, reader, `query($id: ID!) { trace(id: $id) { targetIp ${TRACE_FIELDS} } }`, { id: row.id });
      expect(result.errors).toBeUndefined();
      traced.set(name, { record, host, stored: result.data!.trace });
    }
  }, 120_000);

  afterAll(async () => {
    for (const n of ['s', 'a', 'b', 'c', 'd']) await execute('ip', ['netns', 'del', `${PREFIX}${n}`]).catch(() => undefined);
    await subgraph?.close();
    await identityOrm?.close(true);
    await db?.drop();
  });

  it('stores every hop as an independent reading of scamper\'s record has it', () => {
    expect(traced.size).toBe(Object.keys(TRACES).length);
    for (const { record, host, stored } of traced.values()) expectSameTrace(stored, readScamper(record, host, enricher));
  });

  const path = (name: string) => traced.get(name)!.stored.hops.map((h: Json) => h.responders.map((r: Json) => r.ip).sort());

  it('reaches the target over the load-balanced routers and says it completed', () => {
    for (const name of ['ecmp', 'echo']) {
      const { stored } = traced.get(name)!;
      expect(stored).toMatchObject({ status: 'completed', stopReason: 'completed', hopCount: 3, respondingHops: 3, loss: 0 });
      const [first, second, third] = path(name);
      expect(first).toEqual(['10.33.1.1']);
      expect(second.every((ip: string) => ['10.33.2.2', '10.33.4.2'].includes(ip))).toBe(true);
      expect(third).toEqual(['10.33.3.2']);
      expect(stored.hops[2].errors).toEqual([]);
    }
    // Three probes at every TTL (-Q), each answered.
    expect(traced.get('ecmp')!.stored.hops.map((h: Json) => [h.sent, h.received])).toEqual([[3, 3], [3, 3], [3, 3]]);
  });

  it('stops on the unreachable the routers send, in RIPE Atlas\'s letters', () => {
    expect(traced.get('host')!.stored).toMatchObject({ status: 'failed', stopReason: 'unreach' });
    expect(path('host')).toEqual([['10.33.1.1'], ['10.33.2.2']]);
    expect(traced.get('host')!.stored.hops[1].errors.every((e: string) => e === 'H')).toBe(true);
    expect(traced.get('network')!.stored).toMatchObject({ status: 'failed', stopReason: 'unreach' });
    expect(path('network')).toEqual([['10.33.1.1']]);
    expect(traced.get('network')!.stored.hops[0].errors.every((e: string) => e === 'N')).toBe(true);
    expect(traced.get('prohibited')!.stored).toMatchObject({ status: 'failed', stopReason: 'unreach' });
    expect(traced.get('prohibited')!.stored.hops[1].errors.every((e: string) => e === 'A')).toBe(true);
  });

  it('keeps the silent hops after a black hole up to the gap limit, and finds the loop', () => {
    const blackhole = traced.get('blackhole')!.stored;
    expect(blackhole).toMatchObject({ status: 'failed', stopReason: 'gaplimit', hopCount: 5, respondingHops: 2 });
    expect(path('blackhole')).toEqual([['10.33.1.1'], ['10.33.2.2'], [], [], []]);
    expect(blackhole.hops.slice(2).map((h: Json) => [h.sent, h.received, h.loss])).toEqual([[2, 0, 1], [2, 0, 1], [2, 0, 1]]);
    // r1 sends it to r2, which sends it back: r1 answers again (from its address toward the probe).
    const loop = traced.get('loop')!.stored;
    expect(loop).toMatchObject({ status: 'failed', stopReason: 'loop' });
    expect(path('loop')).toEqual([['10.33.1.1'], ['10.33.2.2'], ['10.33.1.1']]);
  });
});
