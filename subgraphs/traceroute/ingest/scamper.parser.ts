import { isIP } from 'node:net';
import { TraceSource } from '../trace/trace-source.js';
import { RecordRejection, type ParsedHop, type ParsedReply, type ParsedTrace } from './parsed-trace.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** True when `record` is scamper output: a trace, its cycle and metadata lines, or traceroute-caller's one-object form. */
export function isScamperRecord(record: Json): boolean {
  return (
    record.type === 'trace' || record.type === 'cycle-start' || record.type === 'cycle-stop' || 'UUID' in record ||
    ('Trace' in record && 'CycleStart' in record)
  );
}

/** What a scamper line means for the import: a trace, context (hostname) or nothing to store. */
export type ScamperLine = { kind: 'trace'; record: Json } | { kind: 'context'; hostname: string | null } | { kind: 'skip' };

export function classifyScamper(record: Json): ScamperLine {
  if (record.type === 'trace') return { kind: 'trace', record };
  if (isObject(record.Trace)) {
    const start = isObject(record.CycleStart) ? record.CycleStart : {};
    return { kind: 'trace', record: { ...record.Trace, hostname: start.hostname } };
  }
  if (record.type === 'cycle-start') return { kind: 'context', hostname: typeof record.hostname === 'string' ? record.hostname : null };
  return { kind: 'skip' };
}

/**
 * A scamper2 `trace` object (warts2json / traceroute-caller output) as a ParsedTrace. Replies
 * are grouped by probe_ttl; TTLs that never answered are filled with silences so the hop list has
 * no holes. `hostname` (from cycle-start) stands for the probe.
 */
export function parseScamperTrace(record: Json, hostname: string | null): ParsedTrace {
  const targetIp = typeof record.dst === 'string' ? record.dst : '';
  if (!isIP(targetIp)) throw new RecordRejection('dst is missing or not an IP address');
  const start = isObject(record.start) ? record.start : null;
  if (!start || typeof start.sec !== 'number' || start.sec <= 0) throw new RecordRejection('start.sec must be a Unix time');
  const measuredAt = new Date(start.sec * 1000 + Math.floor(Number(start.usec ?? 0) / 1000));
  if (Number.isNaN(measuredAt.getTime())) throw new RecordRejection('start is out of range');
  if (!Array.isArray(record.hops)) throw new RecordRejection('no "hops" array');
  const attempts = Number.isInteger(record.attempts) && (record.attempts as number) > 0 ? (record.attempts as number) : 1;
  const byTtl = new Map<number, { hostname: string | null; replies: ParsedReply[] }>();
  for (const [index, raw] of record.hops.entries()) {
    if (!isObject(raw) || !Number.isInteger(raw.probe_ttl) || (raw.probe_ttl as number) < 0 || (raw.probe_ttl as number) > 255) {
      throw new RecordRejection(`hop #${index + 1}: probe_ttl must be an integer from 0 to 255`);
    }
    const addr = typeof raw.addr === 'string' && isIP(raw.addr) ? raw.addr : null;
    const entry = byTtl.get(raw.probe_ttl as number) ?? { hostname: null, replies: [] };
    entry.hostname ||= typeof raw.name === 'string' && raw.name ? raw.name : null;
    // "*" or "" in addr: scamper kept the probe but not who answered; the answer is not usable.
    entry.replies.push({
      ip: addr,
      rtt: addr && typeof raw.rtt === 'number' && raw.rtt >= 0 ? raw.rtt : null,
      late: false,
      err: raw.icmp_type === 3 ? String(raw.icmp_code ?? '') : null,
      mpls: [],
    });
    byTtl.set(raw.probe_ttl as number, entry);
  }
  const last = Math.max(0, ...byTtl.keys());
  const first = Number.isInteger(record.firsthop) ? (record.firsthop as number) : 1;
  const hops: ParsedHop[] = [];
  for (let ttl = Math.min(first, last || first); ttl <= last; ttl++) {
    const entry = byTtl.get(ttl);
    const replies = entry?.replies ?? [];
    // Scamper lists answers only; the silences are the attempts that got none.
    while (replies.length < attempts && !entry?.replies.some((r) => r.ip)) replies.push({ ip: null, rtt: null, late: false, err: null, mpls: [] });
    hops.push({ hop: ttl, hostname: entry?.hostname ?? null, replies, error: null });
  }
  const src = typeof record.src === 'string' && isIP(record.src) ? record.src : null;
  const host = typeof record.hostname === 'string' ? record.hostname : hostname;
  const method = typeof record.method === 'string' ? record.method.toLowerCase() : '';
  return {
    source: TraceSource.SCAMPER,
    measurementKey: `scamper:${host ?? 'unknown'}:${src ?? 'unknown'}:${targetIp}`.slice(0, 160),
    probeKey: `scamper:${host ?? 'unknown'}:${src ?? 'unknown'}`.slice(0, 80),
    msmId: null,
    probeId: null,
    measuredAt,
    af: isIP(targetIp) === 6 ? 6 : 4,
    protocol: method.startsWith('icmp') ? 'ICMP' : method.startsWith('udp') ? 'UDP' : method.startsWith('tcp') ? 'TCP' : null,
    probeIp: src,
    targetIp,
    targetDomain: null,
    hops,
    reachedTarget: typeof record.stop_reason === 'string' ? record.stop_reason === 'COMPLETED' : null,
    error: null,
  };
}
