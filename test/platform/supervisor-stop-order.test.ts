import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive } from '../support/supervised-output.js';
import { startSupervisedPlatform, type SupervisedPlatform } from '../support/supervised-platform.js';

/**
 * `npm start` stopping (SIGTERM, as a service manager sends it) while a request is under way at
 * the edge: the edge stops accepting and answers it, over the subgraphs that are still up, and
 * only then do the subgraphs stop. The request's body is held back until the stop has begun, so
 * the edge forwards it to its subgraph after the SIGTERM.
 */
let platform: SupervisedPlatform;
let port: number;
let key: string;

const logLines = () => platform.logLines();
const startedPids = () => platform.startedPids();
const waitFor = (predicate: () => boolean, what: string) => platform.waitFor(predicate, what, 60_000);

beforeAll(async () => {
  platform = await startSupervisedPlatform({ name: 'stop-order' });
  ({ port, key } = platform);
}, 300_000);

afterAll(() => platform?.close('SIGKILL'));

describe('npm start stopping with a request under way', () => {
  it('answers the request over its subgraph, then stops the subgraphs, and exits 0', async () => {
    const body = JSON.stringify({ query: '{ members(limit: 1) { data { id } } }' });
    const socket = net.connect(port, '127.0.0.1');
    socket.setEncoding('utf8');
    let received = '';
    socket.on('data', (chunk: string) => (received += chunk));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // Expect: 100-continue: node answers "100 Continue" once the request is handed to the edge's
    // handler, which tells the test the request is under way at a worker.
    socket.write(
      `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
    );
    await waitFor(() => received.includes('100 Continue'), 'the edge to take the request');
    const pids = [...startedPids().values()].flat();
    const [edgePid] = startedPids().get('gateway')!;
    const [membershipPid] = startedPids().get('membership')!;
    const workers = [...(startedPids().get('gateway worker 1') ?? []), ...(startedPids().get('gateway worker 2') ?? [])];
    expect(workers).toHaveLength(2);

    process.kill(platform.process.child.pid!, 'SIGTERM');
    // Both edge workers have begun to stop, and the subgraphs are gone or left for later.
    await waitFor(() => workers.every((pid) => logLines().some((line) => line.msg === 'stopping' && line.pid === pid)), 'the edge workers to stop');
    await waitFor(
      () => logLines().some((line) => line.msg?.startsWith('stopping the edge;') || (line.pid === membershipPid && line.msg === 'stopped')),
      'the supervisor to order the stop',
    );

    socket.write(body);
    await closed;
    const [head, answer] = received.slice(received.indexOf('\r\n\r\n') + 4).split('\r\n\r\n');
    expect(head, received).toMatch(/^HTTP\/1\.1 200 /);
    expect(head.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(answer)).toEqual({ data: { members: { data: [] } } });

    expect(await platform.process.exited).toBe(0);
    expect(pids.filter(alive)).toEqual([]);
    // The subgraphs stopped after the edge had.
    const lines = logLines();
    const edgeStopped = lines.findIndex((line) => line.pid === edgePid && line.msg === 'stopped');
    const membershipStopping = lines.findIndex((line) => line.pid === membershipPid && line.msg === 'stopping');
    expect(edgeStopped).toBeGreaterThanOrEqual(0);
    expect(membershipStopping).toBeGreaterThan(edgeStopped);
  }, 120_000);
});
