import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';

export interface RunningRedis {
  url: string;
  stop(): Promise<void>;
}

/** Where `redis-server` is on PATH, or undefined. */
function findRedisServer(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'redis-server');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

const binary = findRedisServer();

/**
 * Why the Redis tests cannot run here, or undefined when they can. In CI (`CI` set) a missing
 * redis-server is an error, not a skip: .ci/run installs it, and a silent skip would hide that.
 */
export function redisServerMissing(): string | undefined {
  if (binary) return undefined;
  if (process.env.CI) throw new Error('redis-server is not on PATH: CI must install it (.ci/run installs Debian\'s redis-server)');
  return 'redis-server is not installed (apt-get install redis-server); CI runs these tests';
}

/** A throwaway redis-server on a free loopback port, without persistence; answers PING before this returns. */
export async function startRedisServer(): Promise<RunningRedis> {
  if (!binary) throw new Error(redisServerMissing() ?? 'redis-server is not installed');
  const port = await freePort();
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let running = true;
  void exited.then(() => (running = false));

  const url = `redis://127.0.0.1:${port}`;
  const stop = async () => {
    if (running) child.kill('SIGTERM');
    await exited;
  };
  try {
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (!running) throw new Error(`redis-server exited before answering on port ${port}:\n${output}`);
      const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      client.on('error', () => {});
      try {
        await client.connect();
        if ((await client.ping()) === 'PONG') return { url, stop };
      } catch {
        // not listening yet
      } finally {
        client.disconnect();
      }
      if (Date.now() > deadline) throw new Error(`redis-server did not answer PING on port ${port} within 10 s:\n${output}`);
      await sleep(50);
    }
  } catch (error) {
    await stop();
    throw error;
  }
}
