/**
 * One platform instance for bench/chat-fanout, in its own process so that its memory is measured
 * apart from the clients'. By default the in-process arrangement (edge and subgraphs in one Node
 * process, bench/bench-platform.ts); with FANOUT_TOPOLOGY=supervised, what `npm start` runs (the
 * supervisor, the edge's workers and each subgraph in processes of their own, from dist/). On
 * DATABASE_URL (or a temporary embedded PostgreSQL) and REDIS_URL when set. Prints one JSON line
 * when up ({ baseUrl, secret, databaseUrl }), then answers lines on stdin: `profile-start`,
 * `profile-stop <file>` (a V8 CPU profile of this process; in-process only), `gc` (a full
 * collection, answered `collected`; in-process only), `cpu` (the process's CPU time so far, in µs,
 * answered `cpu <n>`; -1 when not in-process), `stop`.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { loadConfig } from '../platform/config.js';
import { openPlatformDatabase } from '../platform/database.js';
import { openIdentityStore } from '../identity/index.js';
import { IdentityService } from '../identity/identity.service.js';
import { freePort } from '../test/support/free-port.js';
import { NEVER_LIMITED, ROOT, startBenchPlatform } from './bench-platform.js';

if (process.env.FANOUT_TOPOLOGY === 'supervised') await runSupervised();

/** `npm start`'s topology on this instance's database; stops it (the whole process group) on `stop`. */
async function runSupervised(): Promise<never> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-fanout-supervised-'));
  const database = await openPlatformDatabase({ databaseUrl: process.env.DATABASE_URL || undefined, dataDir, embeddedPort: await freePort() });
  const port = await freePort();
  const limit = String(NEVER_LIMITED);
  const child = spawn(process.execPath, ['platform/supervisor/launch.mjs'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      HOST: '127.0.0.1',
      PORT: String(port),
      INTERNAL_SECRET: randomBytes(32).toString('hex'),
      MEMBERSHIP_PORT: String(await freePort()),
      MARKETPLACE_PORT: String(await freePort()),
      INFERENCE_PORT: String(await freePort()),
      TRACEROUTE_PORT: String(await freePort()),
      RATE_LIMIT_LIVE_PER_MINUTE: limit,
      RATE_LIMIT_TEST_PER_MINUTE: limit,
      RATE_LIMIT_INFERENCE_PER_MINUTE: limit,
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: limit,
      SUBSCRIPTIONS_PER_INSTANCE: '1000000',
    },
    // A group of its own: stopping signals the supervisor, which stops its services in order.
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      if (output.includes('Platform is up.')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the supervised platform exited with ${code}: ${output}`)));
  });
  const identityOrm = await openIdentityStore(database.url);
  const { secret } = await new IdentityService(identityOrm.em.fork()).createKey({ account: 'bench', kind: 'live' });
  await identityOrm.close();
  process.stdout.write(`${JSON.stringify({ baseUrl: `http://127.0.0.1:${port}`, secret, databaseUrl: database.url })}\n`);
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    }
    await database.stop();
    await rm(dataDir, { recursive: true, force: true });
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const [command] = line.trim().split(/\s+/);
    if (command === 'stop') break;
    if (command.startsWith('profile')) process.stdout.write('profiles are taken of the in-process arrangement only (FANOUT_TOPOLOGY unset)\n');
    // The services are other processes: their heaps and CPU time are their own.
    if (command === 'gc') process.stdout.write('collected nothing\n');
    if (command === 'cpu') process.stdout.write('cpu -1\n');
  }
  return stop() as Promise<never>;
}

const bench = await startBenchPlatform('fanout', {
  redisUrl: process.env.REDIS_URL || undefined,
  subscriptions: { ...loadConfig({}).subscriptions, perInstance: 1_000_000 },
});
const session = new Session();
session.connect();
process.stdout.write(`${JSON.stringify({ baseUrl: bench.platform.baseUrl, secret: bench.key.secret, databaseUrl: bench.databaseUrl })}\n`);

const stop = async () => {
  await bench.stop();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
for await (const line of readline.createInterface({ input: process.stdin })) {
  const [command, argument] = line.trim().split(/\s+/);
  if (command === 'profile-start') {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  } else if (command === 'profile-stop' && argument) {
    const { profile } = await session.post('Profiler.stop');
    await writeFile(argument, JSON.stringify(profile));
    process.stdout.write(`profile written to ${argument}\n`);
  } else if (command === 'gc') {
    // A full collection before each memory reading, so garbage left by start-up or by creating
    // the members is not counted (or, collected meanwhile, subtracted) per socket.
    await session.post('HeapProfiler.collectGarbage');
    process.stdout.write('collected\n');
  } else if (command === 'cpu') {
    // CPU time of this process (edge and subgraphs), user and system, in µs.
    const { user, system } = process.cpuUsage();
    process.stdout.write(`cpu ${user + system}\n`);
  } else if (command === 'stop') {
    break;
  }
}
await stop();
