import { performance } from 'node:perf_hooks';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { UsageService, type UsageCell } from '../../../identity/usage.service.js';
import type { PathTemplates } from './path-template.js';

const PRUNE_EVERY_MS = 10 * 60_000;

/**
 * Counts the membership REST and /graphql requests of live and test principals per account, mode,
 * minute, method, path pattern and status (with total and longest duration), in memory, and adds
 * the counts to identity.usage_minute every few seconds in one upsert. On the hot path a request
 * costs a timestamp, a `finish` listener and a Map update; nothing waits for the database.
 */
export class UsageRecorder {
  private cells = new Map<string, UsageCell>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private lastPrune = 0;

  constructor(
    private readonly orm: MikroORM,
    private readonly options: { restBase: string; templates: PathTemplates; flushMs?: number; logger: Logger },
  ) {
    this.timer = setInterval(() => void this.flush(), options.flushMs ?? 5_000);
    this.timer.unref();
  }

  /** The middleware: mount before the edge guard of each counted interface. */
  middleware() {
    return (req: Request, res: Response, next: NextFunction): void => {
      const path = req.path;
      const graphql = path === '/graphql';
      if (!graphql && path !== this.options.restBase && !path.startsWith(`${this.options.restBase}/`)) return next();
      const started = performance.now();
      res.once('finish', () => {
        const principal = req.principal;
        if (!principal || (principal.kind !== 'live' && principal.kind !== 'test')) return;
        this.record(principal.accountId, principal.mode, req.method, graphql ? '/graphql' : this.options.templates.of(path), res.statusCode, performance.now() - started);
      });
      next();
    };
  }

  record(accountId: string, mode: UsageCell['mode'], method: string, path: string, status: number, ms: number, now = Date.now()): void {
    const minute = Math.floor(now / 60_000) * 60_000;
    const key = `${accountId}|${mode}|${minute}|${method}|${path}|${status}`;
    const cell = this.cells.get(key);
    if (cell) {
      cell.count += 1;
      cell.totalMs += ms;
      if (ms > cell.maxMs) cell.maxMs = ms;
    } else {
      this.cells.set(key, { accountId, mode, minute, method: method.slice(0, 8), path, status, count: 1, totalMs: ms, maxMs: ms });
    }
  }

  /** Writes what has been counted since the last flush (the dashboard's usage route calls it to show fresh figures). */
  flush(): Promise<void> {
    // One flush at a time; a caller during one waits for it and then flushes what came meanwhile.
    const run = async () => {
      const cells = [...this.cells.values()];
      this.cells = new Map();
      const usage = new UsageService(this.orm.em.fork());
      if (cells.length) {
        try {
          await usage.add(cells);
        } catch (error) {
          // Counts are kept for the next flush rather than lost (a brief database outage).
          for (const cell of cells) this.merge(cell);
          this.options.logger.warn({ err: error, cells: cells.length }, 'could not store usage counts; retrying with the next flush');
          return;
        }
      }
      if (Date.now() - this.lastPrune >= PRUNE_EVERY_MS) {
        this.lastPrune = Date.now();
        await usage.prune().catch((error) => this.options.logger.warn({ err: error }, 'could not prune old usage counts'));
      }
    };
    this.flushing = this.flushing.then(run);
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private merge(cell: UsageCell): void {
    const key = `${cell.accountId}|${cell.mode}|${cell.minute}|${cell.method}|${cell.path}|${cell.status}`;
    const existing = this.cells.get(key);
    if (!existing) {
      this.cells.set(key, cell);
      return;
    }
    existing.count += cell.count;
    existing.totalMs += cell.totalMs;
    existing.maxMs = Math.max(existing.maxMs, cell.maxMs);
  }
}
