import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { running } from '../support/process-tree.js';
import { spawnService, TSX } from '../support/service-process.js';

/**
 * A supervisor killed with SIGKILL (the OOM killer, `kill -9`) cannot stop its children; node
 * children see their channel close and leave, but PostgreSQL would run on, holding the port and
 * the data directory, so that the next `npm start` fails on both. The server is bound to its
 * parent's life (PR_SET_PDEATHSIG on Linux): it shuts down fast when the parent dies.
 */
let dir: string | undefined;
let postgresPid: number | undefined;
let parentPid: number | undefined;
let serverParent: number | undefined;
afterAll(async () => {
  for (const pid of [serverParent, parentPid]) if (pid && running(pid)) process.kill(pid, 'SIGKILL');
  if (postgresPid && running(postgresPid)) process.kill(postgresPid, 'SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

const START = `
import { startEmbeddedPostgres } from './platform/database.ts';
const server = await startEmbeddedPostgres({ dir: process.env.PG_DIR, port: Number(process.env.PG_PORT) });
console.log('ready ' + server.server.pid);
setInterval(() => {}, 1 << 30);
`;

it.runIf(process.platform === 'linux')('stops when the process that started it is killed with SIGKILL', async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'orphan-db-'));
  const parent = spawnService(TSX, ['--input-type=module', '-e', START], { ...process.env, PG_DIR: path.join(dir, 'postgres'), PG_PORT: String(await freePort()) });
  parentPid = parent.child.pid;
  await new Promise<void>((resolve, reject) => {
    parent.child.stdout!.on('data', () => parent.output().includes('ready ') && resolve());
    void parent.exited.then((code) => reject(new Error(`the parent exited with ${code}:\n${parent.output()}`)));
  });
  postgresPid = Number(/ready (\d+)/.exec(parent.output())![1]);
  expect(Number(readFileSync(path.join(dir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0])).toBe(postgresPid);
  expect(running(postgresPid)).toBe(true);

  // tsx runs the script in a node process of its own: the server's parent is that one.
  serverParent = Number(readFileSync(`/proc/${postgresPid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
  expect(serverParent).not.toBe(process.pid);
  process.kill(serverParent, 'SIGKILL');
  await parent.exited;
  // Waits on the server's exit (the test's own timeout bounds it): a fast shutdown takes moments.
  while (running(postgresPid)) await new Promise((resolve) => setTimeout(resolve, 100));
  expect(running(postgresPid)).toBe(false);
}, 120_000);
