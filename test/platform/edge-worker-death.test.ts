import { readFileSync } from 'node:fs';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive } from '../support/supervised-output.js';
import { startSupervisedPlatform, type SupervisedPlatform } from '../support/supervised-platform.js';

/**
 * An edge worker that dies, in `npm start`'s topology (the supervisor, two edge workers on one
 * port): requests in flight on it, on keep-alive connections to it and on connections being
 * handed to it as it dies each fail at once (the connection closes), and every other request is
 * served; none waits for the client's own timeout. The worker is stopped (SIGSTOP) before it is
 * killed, so that connections do reach it while it can no longer take them: what a worker busy
 * at its death sees.
 */
let platform: SupervisedPlatform;
let port: number;
let key: string;

const logLines = () => platform.logLines();
const startedPids = (service: string): number[] => platform.startedPids().get(service) ?? [];
const waitFor = (predicate: () => boolean, what: string) => platform.waitFor(predicate, what);

/** The process's state letter in /proc (T: stopped by a signal). */
function processState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
}

interface Outcome {
  status?: number;
  error?: string;
}

/** A GET of a member page, over `agent` (keep-alive) or a connection of its own (false); never times out by itself. */
function get(agent: http.Agent | false, requests: http.ClientRequest[] = []): Promise<Outcome> {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/api/v1/members?limit=1', agent, headers: { authorization: `Bearer ${key}` } }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode }));
      response.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    requests.push(request);
  });
}

beforeAll(async () => {
  platform = await startSupervisedPlatform({ name: 'worker-death' });
  ({ port, key } = platform);
}, 300_000);

afterAll(() => platform?.close('SIGINT'), 60_000);

describe('an edge worker that dies', () => {
  it('fails the requests it held at once and serves the rest; none waits for the client to give up', async () => {
    const [victim] = startedPids('gateway worker 1');
    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const requests: http.ClientRequest[] = [];
    // Keep-alive connections to both workers, as a busy client holds them.
    const warm = await Promise.all(Array.from({ length: 16 }, () => get(keepAlive, requests)));
    expect(warm.every((outcome) => outcome.status === 200)).toBe(true);

    process.kill(victim, 'SIGSTOP');
    await waitFor(() => processState(victim) === 'T', 'the worker to stop');
    const outcomes: (Outcome | undefined)[] = [];
    const send = (agent: http.Agent | false) => {
      const index = outcomes.push(undefined) - 1;
      void get(agent, requests).then((outcome) => (outcomes[index] = outcome));
    };
    // Requests on the keep-alive connections (those to the stopped worker wait on it), and on
    // connections of their own: the port is shared, so a new connection may be given to either worker.
    for (let i = 0; i < 8; i++) send(keepAlive);
    for (let i = 0; i < 8; i++) send(false);
    const fresh = () => outcomes.slice(8);
    // All but at most one new connection are answered by the other worker; then the stopped one dies.
    await waitFor(() => fresh().filter(Boolean).length >= 7, 'the other worker to answer');
    process.kill(victim, 'SIGKILL');

    // The supervisor restarts it (after its backoff and a start of seconds), and a request on the
    // same keep-alive agent is served: by then every request above has long settled.
    await waitFor(() => startedPids('gateway worker 1').length === 2, 'the worker to be restarted');
    await waitFor(() => logLines().some((line) => line.msg === 'gateway worker 1 is back'), 'the worker to be back');
    expect(await get(keepAlive, requests)).toEqual({ status: 200 });
    const unsettled = outcomes.flatMap((outcome, index) => (outcome ? [] : [index < 8 ? `keep-alive #${index}` : `new connection #${index - 8}`]));
    for (const request of requests) request.destroy();
    keepAlive.destroy();
    expect(unsettled).toEqual([]);
    // Each was served, or failed as a connection that closed: never a 5xx.
    for (const outcome of outcomes) {
      if (outcome!.status !== undefined) expect(outcome!.status).toBe(200);
      else expect(outcome!.error).toMatch(/ECONNRESET|socket hang up|EPIPE/);
    }
    // The other worker served the new connections meanwhile.
    expect(fresh().filter((outcome) => outcome?.status === 200).length).toBeGreaterThanOrEqual(7);
    expect(alive(victim)).toBe(false);
  }, 240_000);
});
