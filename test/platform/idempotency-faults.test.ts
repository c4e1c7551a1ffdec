import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultPoint } from '../../core/fault-points.js';
import { alive } from '../support/supervised-output.js';
import { startSupervisedPlatform, type SupervisedPlatform } from '../support/supervised-platform.js';

/**
 * Idempotent writes under process kills, in `npm start`'s topology (the supervisor, one process
 * per subgraph, two edge workers): an edge worker is killed in a burst of keyed writes, and the
 * edge and the membership subgraph are killed at chosen points of one request (before, during
 * and after the commit, by the fault points of core/fault-points.ts). After every fault each
 * acknowledged write exists exactly once, and a retry with the same key replays it.
 */
let faultDir: string;
let sql: pg.Client;
let platform: SupervisedPlatform | undefined;
let port: number;
let key: string;
let memberId: string;

interface Answer {
  status: number;
  replayed: string | undefined;
  body: { id?: string; description?: string; error?: { code?: string } };
}

/** One POST on a connection of its own (requests spread over the workers; none reuses a dead socket). */
function post(route: string, body: unknown, idempotencyKey?: string): Promise<Answer> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        path: `/api/v1${route}`,
        method: 'POST',
        agent: false,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          let parsed: Answer['body'] = {};
          try {
            parsed = JSON.parse(text) as Answer['body'];
          } catch {
            // A cut answer: its status says enough.
          }
          resolve({ status: response.statusCode!, replayed: response.headers['idempotent-replayed'] as string | undefined, body: parsed });
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

const invoice = (description: string) => ({ memberId, currency: 'EUR', lines: [{ description: 'Dues', unitAmount: 1200 }], description });

/**
 * What a careful client does after a failure: the same request with the same key until it gets
 * an answer that is not "try again" (a 5xx, or 409 while the first run is still under way). Each
 * attempt waits on its answer; the bound only keeps a broken platform from hanging the test.
 */
async function retryUntilAnswered(description: string, idempotencyKey: string): Promise<Answer> {
  for (let attempt = 0; attempt < 1200; attempt++) {
    try {
      const answer = await post('/invoices', invoice(description), idempotencyKey);
      if (answer.status < 500 && answer.status !== 409) return answer;
    } catch {
      // The process behind the port is restarting.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no answer for ${idempotencyKey}:\n${platform?.process.output().slice(-4000)}`);
}

async function invoicesDescribed(description: string): Promise<{ id: string }[]> {
  const { rows } = await sql.query<{ id: string }>(`select "id" from "membership"."invoice" where "description" = $1`, [description]);
  return rows;
}

const startedPids = () => platform!.startedPids();

const arm = (point: FaultPoint) => writeFile(path.join(faultDir, point), '');

beforeAll(async () => {
  faultDir = await mkdtemp(path.join(os.tmpdir(), 'fault-points-'));
  platform = await startSupervisedPlatform({ name: 'idempotency-faults', env: { FAULT_POINTS_DIR: faultDir } });
  ({ port, key } = platform);
  sql = new pg.Client({ connectionString: platform.databaseUrl });
  await sql.connect();
  const member = await post('/members', { name: 'Grace Hopper', email: 'grace@example.org' });
  expect(member.status).toBe(201);
  memberId = member.body.id!;
}, 300_000);

afterAll(async () => {
  await sql?.end();
  await platform?.close('SIGINT');
  await rm(faultDir, { recursive: true, force: true });
}, 60_000);

describe('keyed writes under process kills (npm start\'s topology)', () => {
  it('an edge worker killed in a burst of thirty keyed invoices: every retry replays or runs once, and each invoice exists once', async () => {
    const worker = startedPids().get('gateway worker 1')![0];
    const keys = Array.from({ length: 30 }, (_, i) => `burst-${i}`);
    let killed = false;
    const first = await Promise.all(
      keys.map((k) =>
        post('/invoices', invoice(k), k).then(
          (answer) => {
            // Kill one worker as soon as the burst is under way: the other requests are in flight.
            if (!killed) {
              killed = true;
              process.kill(worker, 'SIGKILL');
            }
            return answer;
          },
          () => undefined,
        ),
      ),
    );
    expect(killed).toBe(true);
    const cut = keys.filter((_, i) => first[i] === undefined || first[i]!.status >= 500);
    console.log(`burst: ${cut.length} of ${keys.length} requests cut by the kill`);
    const retried = new Map<string, Answer>();
    for (const k of cut) retried.set(k, await retryUntilAnswered(k, k));
    for (const [i, k] of keys.entries()) {
      const stored = await invoicesDescribed(k);
      expect(stored, k).toHaveLength(1);
      const answer = retried.get(k) ?? first[i]!;
      expect(answer.status, k).toBe(201);
      expect(answer.body.id, k).toBe(stored[0].id);
    }
    // Every key answers the same invoice again, none is written twice.
    for (const k of keys) {
      const again = await post('/invoices', invoice(k), k);
      expect(again.status).toBe(201);
      expect(again.replayed).toBe('true');
      expect(again.body.id).toBe((await invoicesDescribed(k))[0].id);
    }
    for (const k of keys) expect(await invoicesDescribed(k), k).toHaveLength(1);
  }, 300_000);

  it.each([
    // Where the process dies, and whether the invoice had committed when it did.
    ['edge.idempotency.claimed', 'the edge, after the claim and before the write', false],
    ['subgraph.mutation.before-commit', 'the membership subgraph, with the write done but not committed', false],
    ['subgraph.mutation.after-commit', 'the membership subgraph, after the commit and before its answer', true],
    ['edge.idempotency.answered', 'the edge, with the committed answer in hand and before it kept it', true],
  ] as const)('killing %s (%s); committed when killed: %s', async (point, _where, committed) => {
    const k = `point-${point}`;
    await arm(point);
    const pids = startedPids();
    const first = await post('/invoices', invoice(k), k).catch(() => undefined);
    // The process died instead of answering: the client got no success.
    expect(first === undefined || first.status >= 500).toBe(true);
    const service = point.startsWith('edge') ? ['gateway worker 1', 'gateway worker 2'] : ['membership'];
    expect(service.some((name) => pids.get(name)!.some((pid) => !alive(pid)))).toBe(true);
    expect(await invoicesDescribed(k)).toHaveLength(committed ? 1 : 0);

    const retry = await retryUntilAnswered(k, k);
    expect(retry.status).toBe(201);
    const stored = await invoicesDescribed(k);
    expect(stored).toHaveLength(1);
    expect(retry.body.id).toBe(stored[0].id);
    // What had committed is replayed, not run again; what had not runs once.
    expect(retry.replayed).toBe(committed ? 'true' : undefined);
    const again = await post('/invoices', invoice(k), k);
    expect(again).toMatchObject({ status: 201, replayed: 'true', body: { id: stored[0].id } });
    expect(await invoicesDescribed(k)).toHaveLength(1);
  }, 300_000);
});
