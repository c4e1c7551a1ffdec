/**
 * bench/chat-fanout: 100 and 1,000 subscribers on one channel through the gateway (one graphql-ws
 * socket each). Prints delivered/expected (must be 1.0), p50 and p99 from send to receipt, and the
 * platform's memory per connection. The platform runs as its own process (`platform/start.ts`, on
 * a temp DATA_DIR with the embedded PostgreSQL), so its memory is measured apart from the clients'.
 * Run on demand: `npm run bench:chat-fanout` (FANOUT_SIZES=100,1000, FANOUT_MESSAGES=20).
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { freePort } from '../test/support/free-port.js';

const sizes = (process.env.FANOUT_SIZES ?? '100,1000').split(',').map(Number);
const messages = Number(process.env.FANOUT_MESSAGES ?? 20);
const root = path.resolve(import.meta.dirname, '..');
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-fanout-'));
const port = await freePort();
const env = {
  ...process.env,
  DATA_DIR: dataDir,
  PORT: String(port),
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  EMBEDDED_PG_PORT: String(await freePort()),
  MEMBERSHIP_PORT: String(await freePort()),
  MARKETPLACE_PORT: String(await freePort()),
  INFERENCE_PORT: String(await freePort()),
  TRACEROUTE_PORT: String(await freePort()),
  SUBSCRIPTIONS_PER_INSTANCE: '100000',
  RATE_LIMIT_LIVE_PER_MINUTE: '1000000',
  PATH: `${path.join(root, 'node_modules/.bin')}:${process.env.PATH}`,
};
const base = `http://127.0.0.1:${port}`;

function children(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)]).toString().trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Resident memory, in bytes, of the platform's Node processes (tsx and the server; not PostgreSQL or esbuild). */
async function platformRss(pid: number): Promise<number> {
  let total = 0;
  for (const p of [pid, ...children(pid)]) {
    const status = await readFile(`/proc/${p}/status`, 'utf8').catch(() => '');
    // Node 24 names its main thread MainThread, so select by what it is not.
    if (!status || /^Name:\s+(postgres|esbuild)/m.test(status)) continue;
    total += Number(status.match(/^VmRSS:\s+(\d+) kB/m)?.[1] ?? 0) * 1024;
  }
  return total;
}

async function gql(key: string, query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: any; errors?: unknown };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const platform = spawn(path.join(root, 'node_modules/.bin/tsx'), ['platform/start.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
try {
  await new Promise<void>((resolve, reject) => {
    let out = '';
    platform.stdout!.on('data', (chunk) => {
      out += chunk;
      if (out.includes('Platform is up.')) resolve();
    });
    platform.once('exit', (code) => reject(new Error(`the platform exited with ${code}`)));
  });
  const cli = execFileSync(path.join(root, 'node_modules/.bin/tsx'), ['cli/main.ts', 'keys', 'create', '--kind', 'live', '--account', 'bench'], { cwd: root, env }).toString();
  const key = (JSON.parse(cli) as { secret: string }).secret;
  const sender = (await gql(key, 'mutation { createMember(name: "Sender", email: "sender@example.org") { id } }')).createMember.id as string;

  console.log(`\nchat-fanout: ${messages} messages per run, one graphql-ws socket per subscriber, node ${process.version}\n`);
  console.log('subscribers   delivered/expected   p50 ms   p99 ms   platform memory per connection');
  let madeMembers = 0;
  const members: string[] = [];
  for (const size of sizes) {
    while (members.length < size) {
      const batch = Array.from({ length: Math.min(50, size - members.length) }, () => ++madeMembers);
      members.push(
        ...(await Promise.all(batch.map(async (n) => (await gql(key, `mutation { createMember(name: "Member ${n}", email: "m${n}@example.org") { id } }`)).createMember.id as string))),
      );
    }
    const subscribers = members.slice(0, size);
    const channel = (await gql(key, `mutation($a: ID!, $m: [ID!]) { createChatChannel(asMember: $a, name: "fanout-${size}", memberIds: $m) { id } }`, { a: sender, m: subscribers })).createChatChannel.id as string;

    const before = await platformRss(platform.pid!);
    const latencies: number[] = [];
    let delivered = 0;
    // Subscribers that have seen a warm-up message: the subscription is established end to end.
    const ready = new Set<number>();
    const clients: Client[] = [];
    const iterators: AsyncIterableIterator<unknown>[] = [];
    for (const [index, member] of subscribers.entries()) {
      const client = createClient({ url: `ws://127.0.0.1:${port}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${key}` }, retryAttempts: 0 });
      clients.push(client);
      const iterator = client.iterate<{ messageAdded: { text: string } }>({
        query: 'subscription($me: ID!, $c: ID!) { messageAdded(asMember: $me, channelId: $c) { text } }',
        variables: { me: member, c: channel },
      });
      iterators.push(iterator);
      void (async () => {
        for await (const result of iterator) {
          const text = (result.data as { messageAdded: { text: string } }).messageAdded.text;
          if (text === 'warm-up') {
            ready.add(index);
            continue;
          }
          latencies.push(Date.now() - Number(text));
          delivered += 1;
        }
      })().catch(() => {});
    }
    // Warm-up messages until every subscriber has one: all subscriptions are then established,
    // and what follows measures delivery, not connection set-up.
    const send = (text: string) =>
      gql(key, 'mutation($a: ID!, $c: ID!, $t: String!) { sendChatMessage(asMember: $a, mode: CHANNEL, channelId: $c, text: $t) { id } }', { a: sender, c: channel, t: text });
    const warmUntil = Date.now() + 120_000;
    while (ready.size < size) {
      if (Date.now() > warmUntil) throw new Error(`only ${ready.size} of ${size} subscriptions became ready`);
      await send('warm-up');
      await new Promise((r) => setTimeout(r, 1000));
    }
    await new Promise((r) => setTimeout(r, 1000));
    const connected = await platformRss(platform.pid!);

    for (let i = 0; i < messages; i++) {
      await send(String(Date.now()));
      await new Promise((r) => setTimeout(r, 50));
    }
    const expected = size * messages;
    const until = Date.now() + 60_000;
    while (delivered < expected && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    // Late duplicates would push the ratio above 1.0.
    await new Promise((r) => setTimeout(r, 500));

    latencies.sort((a, b) => a - b);
    console.log(
      `${String(size).padStart(11)}   ${(delivered / expected).toFixed(3).padStart(18)}   ${String(percentile(latencies, 50)).padStart(6)}   ${String(percentile(latencies, 99)).padStart(6)}   ${((connected - before) / size / 1024).toFixed(1).padStart(8)} KiB`,
    );
    for (const iterator of iterators) await iterator.return?.();
    await Promise.all(clients.map((client) => client.dispose()));
    await new Promise((r) => setTimeout(r, 500));
  }
  console.log('\nMemory: resident set of the platform process (gateway and subgraphs) with the sockets open, less before, per socket.\n');
} finally {
  platform.kill('SIGTERM');
  await new Promise((resolve) => platform.once('exit', resolve));
  await rm(dataDir, { recursive: true, force: true });
}
