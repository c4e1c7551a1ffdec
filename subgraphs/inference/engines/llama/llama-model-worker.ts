import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { EngineError, type EngineModel, type GenerationEvent, type GenerationInput, type SamplingParams } from '../../engine/text-engine.js';
import type { FromWorker, ToWorker, WorkerGrammar, WorkerLoadOptions, WorkerTools } from './llama-protocol.js';

// Beside this module, in its language: llama-worker.ts under tsx, llama-worker.js compiled in dist/.
const WORKER_PATH = fileURLToPath(new URL(`./llama-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url));
// A model that crashes its worker this often within the window is failed, not restarted again.
const MAX_CRASHES = 3;
const CRASH_WINDOW_MS = 10 * 60_000;

export interface LlamaModelWorkerOptions {
  id: string;
  load: WorkerLoadOptions;
  loadTimeoutMs: number;
  /** Requests that may wait for a busy model's sequences; beyond it they are refused. */
  maxWaiting: number;
}

type Pending =
  | { kind: 'generate'; push: (event: FromWorker) => void }
  | { kind: 'tokenize'; resolve: (tokens: number[]) => void; reject: (error: Error) => void }
  | { kind: 'embed'; resolve: (result: { vectors: number[][]; promptTokens: number }) => void; reject: (error: Error) => void };

interface Waiter {
  resolve: (slot: number) => void;
  reject: (error: unknown) => void;
}

/**
 * One GGUF file's worker process: loads the model, owns its parallel sequences (slots), runs
 * generations on free slots and queues the rest, and restarts the process when it crashes.
 */
export class LlamaModelWorker {
  status: EngineModel['status'] = 'loading';
  error: string | undefined;
  contextLength = 0;
  private child: ChildProcess | null = null;
  private stderrTail = '';
  private readonly free: number[] = [];
  private readonly waiting: Waiter[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  // Bumped at every (re)start: a slot from an earlier process is not handed back to the new one.
  private epoch = 0;
  private crashes: number[] = [];
  private closed = false;
  private loadTimer: NodeJS.Timeout | undefined;
  private readyListeners: (() => void)[] = [];

  constructor(private readonly options: LlamaModelWorkerOptions) {
    this.start();
  }

  get id(): string {
    return this.options.id;
  }

  /** Sequences in use and requests waiting for one. */
  load(): { sequences: number; busy: number; waiting: number } {
    const sequences = this.options.load.sequences;
    return { sequences, busy: this.status === 'ready' ? sequences - this.free.length : 0, waiting: this.waiting.length };
  }

  /** Resolves once the model is ready or failed (for tests and the first start). */
  settled(): Promise<void> {
    if (this.status !== 'loading') return Promise.resolve();
    return new Promise((resolve) => this.readyListeners.push(resolve));
  }

  private start(): void {
    this.status = 'loading';
    this.stderrTail = '';
    this.epoch++;
    // Node's own type stripping runs the worker (the flag for Node 22.17, where it is not yet on by
    // default); no loader is inherited from the parent (vitest, tsx).
    const child = fork(WORKER_PATH, [], { execArgv: ['--experimental-strip-types', '--disable-warning=ExperimentalWarning'], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    this.child = child;
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-4000);
    });
    child.on('message', (message: FromWorker) => this.onMessage(message));
    child.on('exit', (code, signal) => this.onExit(child, code, signal));
    child.on('error', () => undefined);
    this.loadTimer = setTimeout(() => {
      if (this.child === child && this.status === 'loading') {
        this.fail(`Loading took longer than ${this.options.loadTimeoutMs} ms`);
        child.kill('SIGKILL');
      }
    }, this.options.loadTimeoutMs);
    this.send({ type: 'load', options: this.options.load });
  }

  private send(message: ToWorker): void {
    if (this.child?.connected) this.child.send(message);
  }

  private settle(): void {
    clearTimeout(this.loadTimer);
    for (const listener of this.readyListeners.splice(0)) listener();
  }

  private fail(error: string): void {
    this.status = 'failed';
    this.error = error;
    this.settle();
    for (const waiter of this.waiting.splice(0)) waiter.reject(new EngineError('unavailable', `Model ${this.id} failed: ${error}`));
  }

  private onMessage(message: FromWorker): void {
    if (message.type === 'ready') {
      this.status = 'ready';
      this.contextLength = message.contextLength;
      this.free.splice(0, this.free.length, ...Array.from({ length: this.options.load.sequences }, (_, slot) => slot));
      this.settle();
      this.drain();
      return;
    }
    if (message.type === 'load_failed') {
      this.fail(message.error);
      this.child?.kill('SIGKILL');
      return;
    }
    const pending = this.pending.get(message.id);
    if (!pending) return;
    if (pending.kind === 'generate') pending.push(message);
    else if (message.type === 'tokens' && pending.kind === 'tokenize') {
      this.pending.delete(message.id);
      pending.resolve(message.tokens);
    } else if (message.type === 'embeddings' && pending.kind === 'embed') {
      this.pending.delete(message.id);
      pending.resolve({ vectors: message.vectors, promptTokens: message.promptTokens });
    } else if (message.type === 'failed') {
      this.pending.delete(message.id);
      pending.reject(new EngineError(message.reason, message.message, message.param));
    }
  }

  private onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child !== child) return;
    this.child = null;
    const assertion = /GGML_ASSERT\([^\n]*\) failed|error loading model[^\n]*/.exec(this.stderrTail)?.[0];
    const why = `the llama worker exited (${signal ?? `code ${code}`})${assertion ? `: ${assertion}` : ''}`;
    const crash = new EngineError('unavailable', `Model ${this.id} is unavailable: ${why}`);
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      if (pending.kind === 'generate') pending.push({ type: 'failed', id, reason: 'unavailable', message: crash.message });
      else pending.reject(crash);
    }
    this.free.length = 0;
    if (this.closed || this.status === 'failed') return;
    if (this.status === 'loading') {
      // Crashing while loading means the file itself is bad: restarting would crash again.
      this.fail(why);
      return;
    }
    const now = Date.now();
    this.crashes = [...this.crashes.filter((at) => now - at < CRASH_WINDOW_MS), now];
    this.error = why;
    if (this.crashes.length >= MAX_CRASHES) this.fail(`${why}; ${MAX_CRASHES} crashes within ${CRASH_WINDOW_MS / 60_000} minutes`);
    else this.start();
  }

  /** Hands free slots to waiting requests in arrival order. */
  private drain(): void {
    while (this.free.length > 0 && this.waiting.length > 0) this.waiting.shift()!.resolve(this.free.shift()!);
  }

  private release(slot: number, epoch: number): void {
    if (epoch !== this.epoch || this.status !== 'ready' || !this.child) return;
    this.free.push(slot);
    this.drain();
  }

  private ensureReady(): void {
    if (this.status === 'loading') throw new EngineError('model_loading', `Model ${this.id} is loading`);
    if (this.status === 'failed') throw new EngineError('unavailable', `Model ${this.id} failed: ${this.error}`);
  }

  private acquire(signal: AbortSignal): Promise<number> {
    this.ensureReady();
    if (this.free.length > 0) return Promise.resolve(this.free.shift()!);
    if (this.waiting.length >= this.options.maxWaiting) {
      throw new EngineError('unavailable', `Model ${this.id} is busy: all ${this.options.load.sequences} sequences in use and ${this.waiting.length} requests waiting`);
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve: (slot) => {
          signal.removeEventListener('abort', onAbort);
          resolve(slot);
        },
        reject: (error) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      const onAbort = () => {
        const index = this.waiting.indexOf(waiter);
        if (index !== -1) this.waiting.splice(index, 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /**
   * Runs one generation on a sequence of its own; aborting the signal stops it and frees the
   * sequence. `onAccepted` is called once the worker has checked the request (before the prompt's evaluation).
   */
  async *generate(input: GenerationInput, sampling: SamplingParams, grammar: WorkerGrammar | undefined, signal: AbortSignal, onAccepted?: () => void, tools?: WorkerTools, logprobs?: { top: number }): AsyncGenerator<GenerationEvent> {
    signal.throwIfAborted();
    const slot = await this.acquire(signal);
    const epoch = this.epoch;
    const id = this.nextId++;
    const events: FromWorker[] = [];
    let wake: (() => void) | null = null;
    this.pending.set(id, {
      kind: 'generate',
      push: (event) => {
        events.push(event);
        wake?.();
      },
    });
    const onAbort = () => this.send({ type: 'abort', id });
    signal.addEventListener('abort', onAbort, { once: true });
    let finished = false;
    try {
      this.send({ type: 'generate', id, slot, input, sampling, grammar, tools, logprobs });
      for (;;) {
        if (events.length === 0) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = null;
          continue;
        }
        const event = events.shift()!;
        if (event.type === 'accepted') {
          if (!signal.aborted) onAccepted?.();
        } else if (event.type === 'delta') {
          if (!signal.aborted) yield event.logprobs ? { type: 'delta', text: event.text, logprobs: event.logprobs } : { type: 'delta', text: event.text };
        } else if (event.type === 'done') {
          finished = true;
          this.pending.delete(id);
          this.release(slot, epoch);
          yield { type: 'done', finishReason: event.finishReason, usage: event.usage, extensions: { completionTokenIds: event.tokenIds } };
          return;
        } else if (event.type === 'aborted') {
          finished = true;
          this.pending.delete(id);
          this.release(slot, epoch);
          throw signal.reason ?? new DOMException('The generation was aborted', 'AbortError');
        } else if (event.type === 'failed') {
          finished = true;
          this.pending.delete(id);
          this.release(slot, epoch);
          throw new EngineError(event.reason, event.message, event.param);
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      if (!finished && epoch === this.epoch && this.child) {
        // The consumer stopped reading: stop the worker too; the slot comes back with its 'aborted'.
        this.pending.set(id, {
          kind: 'generate',
          push: (event) => {
            if (event.type === 'aborted' || event.type === 'done' || event.type === 'failed') {
              this.pending.delete(id);
              this.release(slot, epoch);
            }
          },
        });
        this.send({ type: 'abort', id });
      }
    }
  }

  /** The prompt's tokens as the model sees them (chat template applied for chat). */
  tokenize(input: GenerationInput, tools?: WorkerTools): Promise<number[]> {
    this.ensureReady();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { kind: 'tokenize', resolve, reject });
      this.send({ type: 'tokenize', id, input, tools });
    });
  }

  /** Embeds on the worker's own embedding context (not a generation sequence). */
  embed(inputs: (string | number[])[]): Promise<{ vectors: number[][]; promptTokens: number }> {
    this.ensureReady();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { kind: 'embed', resolve, reject });
      this.send({ type: 'embed', id, inputs });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.loadTimer);
    this.settle();
    for (const waiter of this.waiting.splice(0)) waiter.reject(new EngineError('unavailable', `Model ${this.id} was removed`));
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }
}
