import type { ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import { isReadyMessage } from './child-protocol.js';
import { RestartBackoff, type BackoffSettings } from './restart-backoff.js';
import { describeExit, ServiceExitedError } from './service-exited.error.js';

export interface SupervisedServiceOptions {
  /** The name in logs: `membership`, `gateway`, `gateway worker 2`. */
  name: string;
  /** Starts one process of the service (child_process.fork, or cluster.fork().process). */
  spawn: () => ChildProcess;
  logger: Logger;
  backoff?: BackoffSettings;
  /** How long a process may take to say it is ready. */
  readyTimeoutMs?: number;
  /** How long a process may take to stop on SIGTERM before it is killed. */
  stopTimeoutMs?: number;
  /**
   * Resolves with the service's address once the process is ready. Default: the IPC message of
   * child-protocol.ts; a program that is not ours (PostgreSQL) says it otherwise.
   */
  ready?: (child: ChildProcess) => Promise<string>;
  /** The signal that asks for an orderly stop (default SIGTERM; PostgreSQL's fast shutdown is SIGINT). */
  stopSignal?: NodeJS.Signals;
}

/** The `ready` message a service of ours sends over IPC once it listens (child-protocol.ts). */
function readyOverIpc(child: ChildProcess): Promise<string> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (!isReadyMessage(message)) return;
      child.off('message', onMessage);
      resolve(message.url);
    };
    child.on('message', onMessage);
  });
}

/**
 * One service kept running in its own process: started, waited for until it reports ready,
 * restarted with exponential backoff whenever it exits unasked, stopped with SIGTERM (then
 * SIGKILL) on request, whatever state it is in: running, starting, or dead and waiting for its
 * restart.
 */
export class SupervisedService {
  private child: ChildProcess | undefined;
  private everReady = false;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly backoff: RestartBackoff;
  /** Where the service answered when it last said it was ready. */
  url: string | undefined;

  constructor(private readonly options: SupervisedServiceOptions) {
    this.backoff = new RestartBackoff(options.backoff);
  }

  get name(): string {
    return this.options.name;
  }

  /** The running process's id, if one runs now. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * Starts the service and resolves with its address once it is ready. A first start that fails
   * rejects (the caller gives up); once it has served, every exit is followed by a restart.
   */
  start(): Promise<string> {
    return this.spawnOnce();
  }

  private spawnOnce(): Promise<string> {
    const { name, logger } = this.options;
    const child = this.options.spawn();
    this.child = child;
    this.backoff.started();
    logger.info({ service: name, childPid: child.pid }, `${name} started`);
    return new Promise((resolve, reject) => {
      let ready = false;
      let gone = false;
      const timer = setTimeout(() => {
        if (ready) return;
        logger.warn({ service: name, childPid: child.pid }, `${name} did not report ready in time; killing it`);
        child.kill('SIGKILL');
      }, this.options.readyTimeoutMs ?? 120_000);
      timer.unref();
      void (this.options.ready ?? readyOverIpc)(child).then((url) => {
        // A process's last output can be read after its exit.
        if (ready || gone) return;
        ready = true;
        clearTimeout(timer);
        this.url = url;
        if (this.everReady) logger.info({ service: name, childPid: child.pid, url }, `${name} is back`);
        this.everReady = true;
        resolve(url);
      });
      child.once('exit', (code, signal) => {
        gone = true;
        clearTimeout(timer);
        if (this.child === child) this.child = undefined;
        if (!ready) reject(new ServiceExitedError(name, code, signal));
        this.exited(code, signal);
      });
    });
  }

  private exited(code: number | null, signal: NodeJS.Signals | null): void {
    // Before it ever served, the caller sees the rejection and decides; a stop was asked for.
    if (this.stopping || !this.everReady) return;
    const { name, logger } = this.options;
    const delayMs = this.backoff.next();
    logger.warn({ service: name, exitCode: code, signal, restartInMs: delayMs }, `${name} exited unexpectedly (${describeExit(code, signal)}); restarting in ${delayMs} ms`);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stopping) return;
      // A restart that fails before ready exits again, and that exit schedules the next try.
      this.spawnOnce().catch(() => {});
    }, delayMs);
  }

  /**
   * Stops the service and keeps it stopped: the stop signal, then SIGKILL after the stop timeout.
   * A process that is gone already (killed, crashed, between restarts) is not waited for.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(this.options.stopSignal ?? 'SIGTERM');
    const killer = setTimeout(() => {
      this.options.logger.warn({ service: this.name, childPid: child.pid }, `${this.name} did not stop in time; killing it`);
      child.kill('SIGKILL');
    }, this.options.stopTimeoutMs ?? 15_000);
    await exited;
    clearTimeout(killer);
  }
}
