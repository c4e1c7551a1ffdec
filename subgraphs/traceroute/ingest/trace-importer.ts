import type { EntityManager } from '@mikro-orm/postgresql';
import { nextBaseline, type Baseline } from '../scoring/anomaly.js';
import type { IpEnricher } from '../enrichment/ip-enricher.js';
import { RecordRejection, type ParsedTrace } from './parsed-trace.js';
import type { RawRecord } from './record-reader.js';
import { isAtlasResult, parseAtlasTraceroute } from './ripe-atlas.parser.js';
import { classifyScamper, isScamperRecord, parseScamperTrace } from './scamper.parser.js';
import { buildTraceRow, type TraceRow } from './trace-builder.js';
import { TraceStore } from './trace.store.js';
import { TraceStatus } from '../trace/trace-status.js';

/** What an import did: counts, and every record it skipped with its position and reason. */
export interface ImportReport {
  /** Records read, the skipped ones included (scamper's metadata and cycle lines are not records). */
  read: number;
  stored: number;
  duplicates: number;
  skipped: { position: string; reason: string }[];
}

const BATCH = 500;

/** Turns one raw record into a trace, nothing (context lines), or a rejection. */
function parseRecord(value: unknown, context: { hostname: string | null }, envelope?: Record<string, unknown>): ParsedTrace | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new RecordRejection('not a JSON object');
  const record = value as Record<string, unknown>;
  if (isAtlasResult(record)) return parseAtlasTraceroute(record, envelope);
  if (isScamperRecord(record)) {
    const line = classifyScamper(record);
    if (line.kind === 'context') context.hostname = line.hostname;
    if (line.kind !== 'trace') return null;
    return parseScamperTrace(line.record, context.hostname);
  }
  if (record.type === 'dns' || 'abuf' in record) throw new RecordRejection('a DNS result, not a traceroute');
  throw new RecordRejection('neither a RIPE Atlas result nor scamper output');
}

/**
 * Imports traceroutes: parses each record, enriches and scores it against the baseline of its
 * probe and target, and stores it. A bad record is reported and skipped; each batch is one
 * transaction, and should it fail, its traces are stored one by one so a single bad row costs
 * only itself. Re-importing stores nothing twice.
 */
export class TraceImporter {
  constructor(
    private readonly em: EntityManager,
    private readonly enricher: IpEnricher,
  ) {}

  async run(records: AsyncIterable<RawRecord>, onProgress?: (report: ImportReport) => void): Promise<ImportReport> {
    const report: ImportReport = { read: 0, stored: 0, duplicates: 0, skipped: [] };
    const context = { hostname: null as string | null };
    async function* parsed() {
      for await (const record of records) {
        if ('error' in record) {
          report.read++;
          report.skipped.push({ position: record.position, reason: record.error });
          continue;
        }
        try {
          const trace = parseRecord(record.value, context, record.envelope);
          if (trace) {
            report.read++;
            yield { position: record.position, trace: { ...trace, sourceRecord: record.text } };
          }
        } catch (error) {
          if (!(error instanceof RecordRejection)) throw error;
          report.read++;
          report.skipped.push({ position: record.position, reason: error.message });
        }
      }
    }
    return this.storeAll(parsed(), report, onProgress);
  }

  /** Stores traces that are parsed already (the synthetic generator's). */
  async store(
    traces: AsyncIterable<{ position: string; trace: ParsedTrace }> | Iterable<{ position: string; trace: ParsedTrace }>,
    report: ImportReport = { read: 0, stored: 0, duplicates: 0, skipped: [] },
    onProgress?: (report: ImportReport) => void,
  ): Promise<ImportReport> {
    async function* counted() {
      for await (const item of traces) {
        report.read++;
        yield item;
      }
    }
    return this.storeAll(counted(), report, onProgress);
  }

  private async storeAll(
    traces: AsyncIterable<{ position: string; trace: ParsedTrace }>,
    report: ImportReport,
    onProgress?: (report: ImportReport) => void,
  ): Promise<ImportReport> {
    let batch: { position: string; trace: ParsedTrace }[] = [];
    for await (const item of traces) {
      batch.push(item);
      if (batch.length >= BATCH) {
        await this.storeBatch(batch, report);
        batch = [];
        onProgress?.(report);
      }
    }
    await this.storeBatch(batch, report);
    onProgress?.(report);
    return report;
  }

  private async storeBatch(batch: { position: string; trace: ParsedTrace }[], report: ImportReport): Promise<void> {
    if (!batch.length) return;
    // Within the batch, the same identity twice is one trace; baselines grow in measurement order.
    const unique = new Map<string, { position: string; trace: ParsedTrace }>();
    for (const item of batch) {
      const key = TraceStore.identity(item.trace.measurementKey, item.trace.measuredAt.toISOString());
      if (unique.has(key)) report.duplicates++;
      else unique.set(key, item);
    }
    const items = [...unique.values()].sort((a, b) => a.trace.measuredAt.getTime() - b.trace.measuredAt.getTime());
    await new TraceStore(this.em).ensurePartitions(items.map((i) => i.trace.measuredAt.toISOString()));
    try {
      await this.em.transactional((em) => this.storeItems(em, items, report));
    } catch (error) {
      if (items.length === 1) {
        report.skipped.push({ position: items[0].position, reason: `not stored: ${(error as Error).message}` });
        return;
      }
      for (const item of items) await this.storeBatch([item], report);
    }
  }

  private async storeItems(em: EntityManager, items: { position: string; trace: ParsedTrace }[], report: ImportReport): Promise<void> {
    const store = new TraceStore(em);
    const existing = await store.existing(items.map((i) => ({ measurementKey: i.trace.measurementKey, measuredAt: i.trace.measuredAt.toISOString() })));
    const fresh = items.filter((i) => !existing.has(TraceStore.identity(i.trace.measurementKey, i.trace.measuredAt.toISOString())));
    // A trace that failed before any hop has no target address, so no path to compare or learn from.
    const traced = fresh.flatMap((i) => (i.trace.targetIp === null ? [] : [{ probeKey: i.trace.probeKey, targetIp: i.trace.targetIp }]));
    const pairs = new Map(traced.map((p) => [`${p.probeKey} ${p.targetIp}`, p]));
    const baselines = await store.baselines([...pairs.values()]);
    const rows: TraceRow[] = [];
    const changed = new Map<string, Baseline>();
    for (const { trace } of fresh) {
      if (trace.targetIp === null) {
        rows.push(buildTraceRow(trace, this.enricher, null));
        continue;
      }
      const pair = `${trace.probeKey} ${trace.targetIp}`;
      const baseline = baselines.get(pair) ?? null;
      const row = buildTraceRow(trace, this.enricher, baseline);
      rows.push(row);
      const next = nextBaseline(baseline, { rttMs: row.rtt_ms, asPath: row.as_path, reachedTarget: row.status === TraceStatus.completed });
      baselines.set(pair, next);
      changed.set(pair, next);
    }
    const inserted = await store.insert(rows);
    await store.saveBaselines(changed);
    report.stored += inserted.size;
    report.duplicates += items.length - inserted.size;
  }
}
