/**
 * One platform instance for bench/chat-fanout, in its own process so that its memory is measured
 * apart from the clients': the in-process arrangement (edge and subgraphs in one Node process,
 * bench/bench-platform.ts) on DATABASE_URL (or a temporary embedded PostgreSQL) and REDIS_URL
 * when set. Prints one JSON line when up ({ baseUrl, secret, databaseUrl }), then answers lines
 * on stdin: `profile-start`, `profile-stop <file>` (a V8 CPU profile of this process), `stop`.
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import readline from 'node:readline';
import { loadConfig } from '../platform/config.js';
import { startBenchPlatform } from './bench-platform.js';

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
  } else if (command === 'stop') {
    break;
  }
}
await stop();
