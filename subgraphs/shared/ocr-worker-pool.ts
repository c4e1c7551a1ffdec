import type Tesseract from 'tesseract.js';

type Waiter = { resolve: (worker: Tesseract.Worker) => void; reject: (error: unknown) => void; signal: AbortSignal; onAbort: () => void };

/**
 * Tesseract workers (each a worker thread holding the English model), created on first use up to
 * `max`, reused, each serving one recognition at a time. A worker whose job was abandoned is
 * terminated rather than reused: Tesseract cannot cancel a recognition in progress.
 */
export class OcrWorkerPool {
  private readonly idle: Tesseract.Worker[] = [];
  private readonly busy = new Set<Tesseract.Worker>();
  private readonly waiters: Waiter[] = [];
  private creating = 0;
  private closed = false;

  constructor(
    private readonly create: () => Promise<Tesseract.Worker>,
    private readonly max: number,
  ) {}

  /** Whether a worker exists or is being made (the model is loaded or loading). */
  get started(): boolean {
    return this.idle.length + this.busy.size + this.creating > 0;
  }

  get loading(): boolean {
    return this.creating > 0 && this.idle.length + this.busy.size === 0;
  }

  async acquire(signal: AbortSignal): Promise<Tesseract.Worker> {
    if (this.closed) throw new Error('the OCR engine is closed');
    signal.throwIfAborted();
    const idle = this.idle.pop();
    if (idle) {
      this.busy.add(idle);
      return idle;
    }
    if (this.busy.size + this.creating < this.max) {
      this.creating++;
      let worker: Tesseract.Worker;
      try {
        worker = await this.create();
      } catch (error) {
        this.creating--;
        // A waiter queued behind this attempt would otherwise wait for a worker that never comes.
        const waiter = this.waiters.shift();
        if (waiter) {
          waiter.signal.removeEventListener('abort', waiter.onAbort);
          this.acquire(waiter.signal).then(waiter.resolve, waiter.reject);
        }
        throw error;
      }
      this.creating--;
      if (this.closed) {
        await worker.terminate();
        throw new Error('the OCR engine is closed');
      }
      this.busy.add(worker);
      if (signal.aborted) {
        this.release(worker);
        signal.throwIfAborted();
      }
      return worker;
    }
    return new Promise<Tesseract.Worker>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          reject(signal.reason);
        },
      };
      signal.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  release(worker: Tesseract.Worker): void {
    this.busy.delete(worker);
    const waiter = this.waiters.shift();
    if (waiter) {
      waiter.signal.removeEventListener('abort', waiter.onAbort);
      this.busy.add(worker);
      waiter.resolve(worker);
    } else this.idle.push(worker);
  }

  /** Terminates a worker that must not be reused; a waiter, if any, gets a new one. */
  discard(worker: Tesseract.Worker): void {
    this.busy.delete(worker);
    void worker.terminate();
    const waiter = this.waiters.shift();
    if (!waiter) return;
    waiter.signal.removeEventListener('abort', waiter.onAbort);
    this.acquire(waiter.signal).then(waiter.resolve, waiter.reject);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) {
      waiter.signal.removeEventListener('abort', waiter.onAbort);
      waiter.reject(new Error('the OCR engine is closed'));
    }
    const workers = [...this.idle.splice(0), ...this.busy];
    this.busy.clear();
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
