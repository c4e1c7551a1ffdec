import { fork } from 'node:child_process';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.js';
import { RestartBackoff, restartDelay } from '../../platform/supervisor/restart-backoff.js';
import { ServiceExitedError } from '../../platform/supervisor/service-exited.error.js';
import { SupervisedService } from '../../platform/supervisor/supervised-service.js';
import { loadTopologyConfig } from '../../platform/supervisor/supervisor-config.js';

/** A logger whose lines the test reads. */
function capturedLogger() {
  const lines: { msg: string; [field: string]: unknown }[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger('info', 'supervisor', destination), lines };
}

/** A real child process running `script` with an IPC channel, as the supervisor starts services. */
const node = (script: string) => () => fork('-e', [script], { execArgv: [], stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
// `fork` runs a module path; `-e` as the "module" with no execArgv runs node -e <script>.
const READY_THEN_EXIT = "process.send({ type: 'ready', url: 'http://127.0.0.1:1/graphql' }); setTimeout(() => process.exit(3), 100);";
const READY_AND_STAY = "process.on('SIGTERM', () => process.exit(0)); process.send({ type: 'ready', url: 'http://127.0.0.1:1/graphql' }); setInterval(() => {}, 1000);";

describe('restart backoff', () => {
  it('doubles from the base up to the ceiling', () => {
    const settings = { baseMs: 500, maxMs: 30_000, stableMs: 30_000 };
    expect([1, 2, 3, 4, 7, 20].map((attempt) => restartDelay(attempt, settings))).toEqual([500, 1000, 2000, 4000, 30_000, 30_000]);
  });

  it('starts again from the base after a run longer than the stable time', () => {
    const backoff = new RestartBackoff({ baseMs: 100, maxMs: 10_000, stableMs: 1000 });
    backoff.started(0);
    expect(backoff.next(10)).toBe(100);
    backoff.started(20);
    expect(backoff.next(30)).toBe(200);
    backoff.started(40);
    expect(backoff.next(50)).toBe(400);
    backoff.started(100);
    expect(backoff.next(5000)).toBe(100);
  });
});

describe('topology settings', () => {
  it('runs one edge worker per core by default and takes EDGE_WORKERS', () => {
    expect(loadTopologyConfig({}).edgeWorkers).toBeGreaterThanOrEqual(1);
    expect(loadTopologyConfig({ EDGE_WORKERS: '3' })).toEqual({ edgeWorkers: 3, singleProcess: false });
    expect(loadTopologyConfig({ SINGLE_PROCESS: 'true' }).singleProcess).toBe(true);
  });

  it('refuses a bad EDGE_WORKERS or SINGLE_PROCESS, naming the variable', () => {
    for (const bad of ['0', '-1', '1.5', 'two', '1000']) expect(() => loadTopologyConfig({ EDGE_WORKERS: bad })).toThrow(/EDGE_WORKERS/);
    expect(() => loadTopologyConfig({ SINGLE_PROCESS: 'yes' })).toThrow(/SINGLE_PROCESS/);
  });
});

describe('a supervised service', () => {
  it('fails its first start when the process exits before it is ready, with the exit code', async () => {
    const { logger } = capturedLogger();
    const service = new SupervisedService({ name: 'broken', logger, spawn: node('process.exit(7)') });
    const failure = await service.start().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ServiceExitedError);
    expect((failure as ServiceExitedError).message).toBe('broken exited before it was ready (exit code 7)');
    await service.stop();
  });

  it('restarts a process that exits after it served, with growing waits, until stopped', async () => {
    const { logger, lines } = capturedLogger();
    const service = new SupervisedService({ name: 'flaky', logger, spawn: node(READY_THEN_EXIT), backoff: { baseMs: 50, maxMs: 1000, stableMs: 60_000 } });
    expect(await service.start()).toBe('http://127.0.0.1:1/graphql');
    const until = Date.now() + 20_000;
    while (lines.filter((line) => line.msg.startsWith('flaky exited unexpectedly')).length < 3 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    await service.stop();
    const exits = lines.filter((line) => line.msg.startsWith('flaky exited unexpectedly'));
    expect(exits.slice(0, 3).map((line) => [line.exitCode, line.restartInMs])).toEqual([
      [3, 50],
      [3, 100],
      [3, 200],
    ]);
    expect(lines.filter((line) => line.msg === 'flaky is back').length).toBeGreaterThanOrEqual(2);
    // Stopped, it stays stopped.
    const started = lines.filter((line) => line.msg === 'flaky started').length;
    await new Promise((r) => setTimeout(r, 600));
    expect(lines.filter((line) => line.msg === 'flaky started').length).toBe(started);
  }, 30_000);

  it('stops its process with SIGTERM and does not restart it', async () => {
    const { logger, lines } = capturedLogger();
    const service = new SupervisedService({ name: 'steady', logger, spawn: node(READY_AND_STAY) });
    await service.start();
    const pid = service.pid!;
    await service.stop();
    expect(() => process.kill(pid, 0)).toThrow();
    await new Promise((r) => setTimeout(r, 700));
    expect(lines.filter((line) => line.msg === 'steady started')).toHaveLength(1);
    expect(lines.some((line) => line.msg.includes('exited unexpectedly'))).toBe(false);
  });

  it('kills a process that ignores SIGTERM once the stop timeout passes', async () => {
    const { logger, lines } = capturedLogger();
    const stubborn = "process.on('SIGTERM', () => {}); process.send({ type: 'ready', url: 'x' }); setInterval(() => {}, 1000);";
    const service = new SupervisedService({ name: 'stubborn', logger, spawn: node(stubborn), stopTimeoutMs: 300 });
    await service.start();
    const pid = service.pid!;
    await service.stop();
    expect(() => process.kill(pid, 0)).toThrow();
    expect(lines.some((line) => line.msg === 'stubborn did not stop in time; killing it')).toBe(true);
  });
});
