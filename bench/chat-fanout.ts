/**
 * bench/chat-fanout: subscribers on one chat channel through the gateway, one graphql-ws socket
 * each. Two runs:
 *   - FANOUT_SIZES (1000) subscribers on one platform instance (in-process events);
 *   - FANOUT_SHARED (10000) subscribers over two instances that share the database and a Redis
 *     (a redis-server this bench starts, or REDIS_URL), half on each, messages sent to the first.
 * Prints delivered/expected (must be 1.000), p50 and p99 from send to receipt, and the platform's
 * resident memory per socket. Each instance runs in its own process (bench/fanout-instance.ts),
 * so its memory is measured apart from the clients'. FANOUT_PROFILE=<dir> writes a CPU profile
 * of the first instance over the measured messages (docs/profiling.md).
 * FANOUT_TOPOLOGY=supervised runs each instance as `npm start` does (bench/fanout-instance.ts).
 * FANOUT_BY_MESSAGE=1 prints each timed message's first and last delivery.
 * The subscribers run in FANOUT_CLIENT_THREADS (4) worker threads (bench/fanout-subscribers.ts),
 * a share each, and the bench prints those threads' own GC pauses; 1 puts them all in one thread,
 * as the bench did before (one heap, every receipt behind the others).
 * Run on demand: `npm run bench:chat-fanout` (FANOUT_SIZES=100,1000, FANOUT_SHARED=0 to skip, FANOUT_MESSAGES=20).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import { Worker } from 'node:worker_threads';
import { startRedisServer, type RunningRedis } from '../test/support/redis-server.js';
import { benchCommand, COMPILED, percentile, ROOT } from './bench-platform.js';

const sizes = (process.env.FANOUT_SIZES ?? '1000').split(',').map(Number).filter(Boolean);
const shared = Number(process.env.FANOUT_SHARED ?? 10_000);
const messages = Number(process.env.FANOUT_MESSAGES ?? 20);
const profileDir = process.env.FANOUT_PROFILE;
/** Threads the subscribers are spread over (bench/fanout-subscribers.ts); 1 puts every socket in one. */
const clientThreads = Number(process.env.FANOUT_CLIENT_THREADS ?? 4);

interface Instance {
  process: ChildProcess;
  baseUrl: string;
  wsUrl: string;
  secret: string;
  databaseUrl: string;
  command(line: string): void;
  /** A full garbage collection in the instance, when it can (in-process); resolves once done. */
  collect(): Promise<void>;
  /** The instance process's CPU time so far (user and system, µs); -1 when it is not in-process. */
  cpu(): Promise<number>;
  stop(): Promise<void>;
}

/** Starts bench/fanout-instance.ts and waits for its ready line. More descriptors than the default 20,000: each subscriber holds four sockets. */
async function startInstance(env: Record<string, string | undefined>): Promise<Instance> {
  const command = benchCommand('fanout-instance').map((part) => `"${part}"`).join(' ');
  const child = spawn('bash', ['-c', `ulimit -n 65536 2>/dev/null; exec ${command}`], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout! });
  const ready = await new Promise<{ baseUrl: string; secret: string; databaseUrl: string }>((resolve, reject) => {
    lines.once('line', (line) => resolve(JSON.parse(line)));
    child.once('exit', (code) => reject(new Error(`a platform instance exited with ${code}`)));
  });
  const collected: (() => void)[] = [];
  const cpuTimes: ((micros: number) => void)[] = [];
  lines.on('line', (line) => {
    if (line.startsWith('collected')) collected.shift()?.();
    else if (line.startsWith('cpu ')) cpuTimes.shift()?.(Number(line.slice(4)));
    else console.log(`  (instance) ${line}`);
  });
  return {
    process: child,
    ...ready,
    wsUrl: `${ready.baseUrl.replace(/^http/, 'ws')}/graphql`,
    command: (line) => child.stdin!.write(`${line}\n`),
    collect: () =>
      new Promise<void>((resolve) => {
        collected.push(resolve);
        child.stdin!.write('gc\n');
      }),
    cpu: () =>
      new Promise<number>((resolve) => {
        cpuTimes.push(resolve);
        child.stdin!.write('cpu\n');
      }),
    stop: async () => {
      if (child.exitCode !== null) return;
      child.stdin!.write('stop\n');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

function children(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)]).toString().trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Resident memory, in bytes, of an instance's Node processes (bash, tsx and the server; not PostgreSQL or esbuild). */
async function instanceRss(pid: number): Promise<number> {
  let total = 0;
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...children(all[i]));
  for (const p of all) {
    const status = await readFile(`/proc/${p}/status`, 'utf8').catch(() => '');
    // Node 24 names its main thread MainThread, so select by what it is not.
    if (!status || /^Name:\s+(postgres|esbuild|bash)/m.test(status)) continue;
    total += Number(status.match(/^VmRSS:\s+(\d+) kB/m)?.[1] ?? 0) * 1024;
  }
  return total;
}

async function gql(instance: Instance, query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const response = await fetch(`${instance.baseUrl}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${instance.secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: any; errors?: unknown };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

/** Members created so far on a database, reused by later runs on it. */
const membersOf = new Map<string, string[]>();
async function members(instance: Instance, count: number): Promise<string[]> {
  const made = membersOf.get(instance.databaseUrl) ?? [];
  membersOf.set(instance.databaseUrl, made);
  while (made.length < count) {
    const batch = Array.from({ length: Math.min(50, count - made.length) }, (_, i) => made.length + i + 1);
    made.push(
      ...(await Promise.all(batch.map(async (n) => (await gql(instance, `mutation { createMember(name: "Member ${n}", email: "m${n}@example.org") { id } }`)).createMember.id as string))),
    );
  }
  return made.slice(0, count);
}

interface Result {
  label: string;
  subscribers: number;
  delivered: number;
  expected: number;
  p50: number;
  p99: number;
  kibPerSocket: number;
  /** The instances' CPU time (edge and subgraphs, not PostgreSQL or Redis) over the timed messages, per delivery; NaN when not in-process. */
  cpuPerDelivery: number;
  /** The subscriber threads' garbage-collection pauses from the first timed send on: the longest, and all of them together (ms). */
  clientPauseMax: number;
  clientPauseTotal: number;
}

/**
 * `size` subscribers spread evenly over `instances`, messages sent through the first. Warm-up
 * messages go until every subscriber has one (all subscriptions established end to end), then
 * `messages` timestamped ones, 50 ms apart.
 */
async function run(label: string, instances: Instance[], size: number): Promise<Result> {
  const [first] = instances;
  const sender = (await gql(first, `mutation { createMember(name: "Sender ${label}", email: "sender-${size}@example.org") { id } }`)).createMember.id as string;
  const subscribers = await members(first, size);
  const channel = (await gql(first, `mutation($a: ID!, $m: [ID!]) { createChatChannel(asMember: $a, name: "fanout-${label.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}", memberIds: $m) { id } }`, { a: sender, m: subscribers }))
    .createChatChannel.id as string;

  /** Resident memory of each instance after a full collection, so only what is live is counted. */
  const rssNow = () => Promise.all(instances.map(async (i) => (await i.collect(), instanceRss(i.process.pid!))));
  const before = await rssNow();
  let delivered = 0;
  const ready = new Set<number>();
  /** Why subscriptions ended early, by message: a bench that hides them measures nothing. */
  const failures = new Map<string, number>();
  // The subscribers in shares, each in a thread of its own (bench/fanout-subscribers.ts).
  const threads = Math.max(1, Math.min(clientThreads, size));
  const deliveredBy = new Array<number>(threads).fill(0);
  const shares = Array.from({ length: threads }, () => [] as { index: number; member: string; wsUrl: string }[]);
  for (const [index, member] of subscribers.entries()) shares[index % threads].push({ index, member, wsUrl: instances[index % instances.length].wsUrl });
  const workers = shares.map((share, t) => {
    const worker = new Worker(new URL(COMPILED ? './fanout-subscribers.js' : './fanout-subscribers.ts', import.meta.url), {
      workerData: { subscribers: share, secret: first.secret, channel, pauseEvery: Math.max(1, Math.round(200 / threads)) },
    });
    worker.on('message', (message: { type: string; index?: number; message?: string; count?: number }) => {
      if (message.type === 'ready') ready.add(message.index!);
      else if (message.type === 'failed') failures.set(message.message!, (failures.get(message.message!) ?? 0) + 1);
      else if (message.type === 'delivered') {
        delivered += message.count! - deliveredBy[t];
        deliveredBy[t] = message.count!;
      }
    });
    worker.on('error', (error) => failures.set(`a subscriber thread failed: ${error.message}`, share.length));
    return worker;
  });
  /** One answer of each thread, of the given type, to a command. */
  const ask = <T>(command: string, type: string) =>
    Promise.all(
      workers.map(
        (worker) =>
          new Promise<T>((resolve) => {
            const listen = (message: { type: string }) => {
              if (message.type !== type) return;
              worker.off('message', listen);
              resolve(message as T);
            };
            worker.on('message', listen);
            worker.postMessage(command);
          }),
      ),
    );
  const send = (text: string) =>
    gql(first, 'mutation($a: ID!, $c: ID!, $t: String!) { sendChatMessage(asMember: $a, mode: CHANNEL, channelId: $c, text: $t) { id } }', { a: sender, c: channel, t: text });
  const warmUntil = Date.now() + 300_000;
  while (ready.size < size) {
    // Every subscription is either ready or ended: waiting longer cannot change the count.
    const ended = [...failures.values()].reduce((sum, n) => sum + n, 0);
    if (Date.now() > warmUntil || ready.size + ended >= size) throw new Error(`only ${ready.size} of ${size} subscriptions became ready; ended early: ${JSON.stringify([...failures])}`);
    await send('warm-up');
    await new Promise((r) => setTimeout(r, 2000));
  }
  await new Promise((r) => setTimeout(r, 2000));

  if (profileDir) first.command('profile-start');
  const cpuBefore = await Promise.all(instances.map((i) => i.cpu()));
  /** How long each timed message's mutation took to answer, by its text. */
  const mutationMs = new Map<string, number>();
  for (let i = 0; i < messages; i++) {
    const text = String(Date.now());
    await send(text);
    mutationMs.set(text, Date.now() - Number(text));
    await new Promise((r) => setTimeout(r, 50));
  }
  const expected = size * messages;
  const until = Date.now() + 120_000;
  while (delivered < expected && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  const cpuAfter = await Promise.all(instances.map((i) => i.cpu()));
  const cpuSpent = cpuBefore.some((micros) => micros < 0) ? NaN : cpuAfter.reduce((sum, micros, i) => sum + micros - cpuBefore[i], 0);
  // Late duplicates would push the ratio above 1.0.
  await new Promise((r) => setTimeout(r, 500));
  if (profileDir) first.command(`profile-stop ${path.join(profileDir, `fanout-${label.replace(/[^a-z0-9]+/gi, "-")}.cpuprofile`)}`);

  // Read with every socket still open, after the timed messages: a collection before them would
  // change what they measure (a heap just shrunk to its live set collects again sooner).
  const connected = await rssNow();
  const reports = await ask<{ byMessage: [string, number[]][]; pauses: [number, number][] }>('report', 'report');
  /** Each timed message's latencies, by its text (its send time). */
  const byMessage = new Map<string, number[]>();
  for (const report of reports) for (const [text, all] of report.byMessage) byMessage.set(text, [...(byMessage.get(text) ?? []), ...all]);
  const latencies = [...byMessage.values()].flat().sort((a, b) => a - b);
  // The subscriber threads' own collections from the first timed send to the end: time in them
  // is the clients', counted in a latency all the same.
  const firstSend = Math.min(...[...mutationMs.keys()].map(Number));
  const clientPauses = reports.flatMap((report) => report.pauses.filter(([end]) => end >= firstSend).map(([, ms]) => ms));
  if (process.env.FANOUT_BY_MESSAGE === '1') {
    // Where the p99 comes from: one slow message, or every message's last subscribers.
    console.log(`  ${label}, by message (the mutation's answer/first/last subscriber, ms after the send, in send order):`);
    const line = [...byMessage.entries()].sort(([a], [b]) => Number(a) - Number(b)).map(([text, all]) => `${mutationMs.get(text)}/${Math.min(...all)}/${Math.max(...all)}`);
    console.log(`  ${line.join(' ')}`);
  }
  await ask('close', 'closed');
  await Promise.all(workers.map((worker) => worker.terminate()));
  await new Promise((r) => setTimeout(r, 1000));
  const grown = connected.reduce((sum, rss, i) => sum + rss - before[i], 0);
  return {
    label,
    subscribers: size,
    // Counted from the latencies themselves: the running count only paced the wait.
    delivered: latencies.length,
    expected,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    kibPerSocket: grown / size / 1024,
    cpuPerDelivery: cpuSpent / Math.max(latencies.length, 1),
    clientPauseMax: Math.max(0, ...clientPauses),
    clientPauseTotal: clientPauses.reduce((sum, ms) => sum + ms, 0),
  };
}

const results: Result[] = [];
const row = (r: Result) =>
  `${r.label.padEnd(33)}${String(r.subscribers).padStart(11)}   ${(r.delivered / r.expected).toFixed(3).padStart(18)}   ${String(r.p50).padStart(6)}   ${String(r.p99).padStart(6)}   ${r.kibPerSocket.toFixed(1).padStart(9)} KiB   ${Number.isNaN(r.cpuPerDelivery) ? '     n/a' : r.cpuPerDelivery.toFixed(0).padStart(8)}   ${r.clientPauseMax.toFixed(0).padStart(13)} / ${r.clientPauseTotal.toFixed(0)}`;
/** Each run's row as soon as it is measured, so a later run that fails does not lose it. */
const record = (r: Result) => {
  results.push(r);
  console.log(`measured: ${row(r)}`);
};
const running: { stop(): Promise<unknown> }[] = [];
try {
  if (sizes.length) {
    const single = await startInstance({ REDIS_URL: '' });
    running.push(single);
    for (const size of sizes) record(await run(`${size} on one instance`, [single], size));
    await single.stop();
  }
  if (shared > 0) {
    const redis: RunningRedis = process.env.REDIS_URL ? { url: process.env.REDIS_URL, stop: async () => {} } : await startRedisServer();
    running.push(redis);
    const a = await startInstance({ REDIS_URL: redis.url });
    running.push(a);
    // The second instance on the first one's database (its embedded PostgreSQL), events through the same Redis.
    const b = await startInstance({ REDIS_URL: redis.url, DATABASE_URL: a.databaseUrl });
    running.push(b);
    record(await run(`${shared} over two instances`, [a, b], shared));
  }

  const topology = process.env.FANOUT_TOPOLOGY === 'supervised' ? "npm start's (supervised processes)" : 'in-process (edge and subgraphs in one process)';
  console.log(`\nchat-fanout: ${messages} messages per run, 50 ms apart, one graphql-ws socket per subscriber, subscribers in ${clientThreads} client thread(s), instances ${topology}, ${COMPILED ? 'compiled JavaScript' : 'under tsx'}, node ${process.version}\n`);
  console.log('run                              subscribers   delivered/expected   p50 ms   p99 ms   memory per socket   CPU µs per delivery   client GC ms, longest / all');
  for (const r of results) console.log(row(r));
  console.log('\nTargets: 1,000 on one instance p99 < 100 ms; 10,000 over two p99 < 1 s; all delivered; at most 113 KiB per socket.');
  console.log('CPU per delivery: user and system time of the instances\' processes (edge and subgraphs; not PostgreSQL, Redis or the clients) from the first timed message to the last delivery, over the deliveries.');
  console.log('Client GC: the subscriber threads\' own garbage-collection pauses from the first timed send on. They are in the latencies: a paused thread reads its sockets late.');
  console.log('Memory: resident set of the instances\' Node processes (gateway and subgraphs) with the sockets open, less before, per socket; each reading after a full garbage collection (in-process instances).\n');
} finally {
  for (const service of running.reverse()) await service.stop().catch(() => {});
}
