import { isIP } from 'node:net';
import { canonicalIp } from '../trace/canonical-ip.js';
import { TraceSource } from '../trace/trace-source.js';
import { TraceStopReason } from '../trace/trace-stop-reason.js';
import { icmpError } from './icmp-error.js';
import { blankReply, RecordRejection, type ParsedHop, type ParsedReply, type ParsedTrace } from './parsed-trace.js';

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

const integer = (value: unknown): number | null => (Number.isInteger(value) ? (value as number) : null);

/** MPLS labels of scamper's `icmpext`: [{ie_cn: 1, ie_ct: 1, mpls_labels: [{mpls_label, ...}]}]. */
function mplsLabels(icmpext: unknown): number[] {
  if (!Array.isArray(icmpext)) return [];
  return icmpext.flatMap((ext) =>
    isObject(ext) && Array.isArray(ext.mpls_labels) ? ext.mpls_labels.flatMap((l) => (isObject(l) && Number.isInteger(l.mpls_label) ? [l.mpls_label as number] : [])) : [],
  );
}

/**
 * Probes sent per TTL. scamper lists answers only, each with its probe_id (1 for the first attempt):
 * by default it stops probing a TTL at its first answer, so probe_id k answered means k probes went
 * out, and a silent TTL had all `attempts`; with all-attempts (-Q) every TTL had `attempts`. The
 * trace's probe_count (all probes sent) tells the two apart; without it the first reading stands.
 */
function probesSent(ttls: number[], answered: Map<number, number>, attempts: number, probeCount: number | null): Map<number, number> {
  const firstAnswer = new Map(ttls.map((ttl) => [ttl, answered.get(ttl) ?? attempts]));
  const all = new Map(ttls.map((ttl) => [ttl, Math.max(attempts, answered.get(ttl) ?? 0)]));
  const total = (sent: Map<number, number>) => [...sent.values()].reduce((a, b) => a + b, 0);
  return probeCount !== null && total(firstAnswer) !== probeCount && total(all) === probeCount ? all : firstAnswer;
}

const STOP_REASONS = new Set<string>(Object.values(TraceStopReason));

/**
 * A scamper2 `trace` object (sc_warts2json / scamper -O json / traceroute-caller output) as a
 * ParsedTrace. Every TTL from firsthop to hop_count is a hop, the silent ones too (a trace that
 * stopped on its gap limit ends in them); unanswered probes are timeouts in probe_id order; a
 * second answer to one probe is a duplicate. `hostname` (from cycle-start) stands for the probe.
 */
export function parseScamperTrace(record: Json, hostname: string | null): ParsedTrace {
  if (typeof record.dst !== 'string' || !isIP(record.dst)) throw new RecordRejection('dst is missing or not an IP address');
  // Addresses in one spelling (canonicalIp), so the target and the hops compare and search as one.
  const targetIp = canonicalIp(record.dst);
  const start = isObject(record.start) ? record.start : null;
  if (!start || typeof start.sec !== 'number' || start.sec <= 0) throw new RecordRejection('start.sec must be a Unix time');
  const measuredAt = new Date(start.sec * 1000 + Math.floor(Number(start.usec ?? 0) / 1000));
  if (Number.isNaN(measuredAt.getTime())) throw new RecordRejection('start is out of range');
  const hopCount = integer(record.hop_count);
  // A trace whose every probe went unanswered has no "hops" at all, only its hop_count.
  if (!Array.isArray(record.hops) && hopCount === null) throw new RecordRejection('no "hops" array');
  const rawHops: unknown[] = Array.isArray(record.hops) ? record.hops : [];
  const af = isIP(targetIp) === 6 ? 6 : 4;
  const attempts = (integer(record.attempts) ?? 0) > 0 ? (record.attempts as number) : 1;
  const byTtl = new Map<number, ParsedReply[]>();
  const answered = new Map<number, number>();
  for (const [index, raw] of rawHops.entries()) {
    if (!isObject(raw) || !Number.isInteger(raw.probe_ttl) || (raw.probe_ttl as number) < 0 || (raw.probe_ttl as number) > 255) {
      throw new RecordRejection(`hop #${index + 1}: probe_ttl must be an integer from 0 to 255`);
    }
    const ttl = raw.probe_ttl as number;
    const replies = byTtl.get(ttl) ?? [];
    byTtl.set(ttl, replies);
    const probeId = integer(raw.probe_id) ?? replies.length + 1;
    answered.set(ttl, Math.max(answered.get(ttl) ?? 0, probeId));
    // "*" or "" in addr: scamper kept the probe but not who answered; the answer is not usable.
    const ip = typeof raw.addr === 'string' && isIP(raw.addr) ? canonicalIp(raw.addr) : null;
    const again = replies.some((r) => r.probeId === probeId && r.kind === 'reply');
    const icmpType = integer(raw.icmp_type);
    const icmpCode = integer(raw.icmp_code);
    replies.push({
      ...blankReply(ip === null ? 'timeout' : again ? 'duplicate' : 'reply'),
      ip,
      rtt: ip && typeof raw.rtt === 'number' && raw.rtt >= 0 ? raw.rtt : null,
      err: ip === null ? null : icmpError(af, icmpType, icmpCode, ip === targetIp),
      icmpType,
      icmpCode,
      replyTtl: integer(raw.reply_ttl),
      probeId,
      hostname: typeof raw.name === 'string' && raw.name ? raw.name : null,
      mpls: mplsLabels(raw.icmpext),
    });
  }
  const seen = [...byTtl.keys()];
  const first = Math.min(integer(record.firsthop) ?? 1, ...seen);
  const last = Math.max(hopCount ?? 0, ...seen);
  const ttls = Array.from({ length: Math.max(0, last - first + 1) }, (_, i) => first + i);
  const sentByTtl = probesSent(ttls, answered, attempts, integer(record.probe_count));
  const hops: ParsedHop[] = ttls.map((ttl) => {
    const sent = sentByTtl.get(ttl)!;
    const listed = byTtl.get(ttl) ?? [];
    const outcomes = new Set(listed.filter((r) => r.kind !== 'duplicate').map((r) => r.probeId));
    const silent = Array.from({ length: sent }, (_, i) => i + 1)
      .filter((id) => !outcomes.has(id))
      .map((id) => ({ ...blankReply('timeout'), probeId: id }));
    const replies = [...listed, ...silent].sort((a, b) => a.probeId! - b.probeId!);
    return { hop: ttl, sent, replies, error: null };
  });
  const src = typeof record.src === 'string' && isIP(record.src) ? canonicalIp(record.src) : null;
  const host = typeof record.hostname === 'string' ? record.hostname : hostname;
  const method = typeof record.method === 'string' ? record.method.toLowerCase() : '';
  const reason = typeof record.stop_reason === 'string' ? record.stop_reason.toLowerCase() : '';
  const stopReason = STOP_REASONS.has(reason) ? (reason as TraceStopReason) : TraceStopReason.none;
  const nothingSent = hops.every((h) => h.sent === 0) && (integer(record.probe_count) ?? 0) === 0;
  return {
    source: TraceSource.SCAMPER,
    measurementKey: `scamper:${host ?? 'unknown'}:${src ?? 'unknown'}:${targetIp}`.slice(0, 160),
    probeKey: `scamper:${host ?? 'unknown'}:${src ?? 'unknown'}`.slice(0, 80),
    msmId: null,
    probeId: null,
    measuredAt,
    af,
    protocol: method.startsWith('icmp') ? 'ICMP' : method.startsWith('udp') ? 'UDP' : method.startsWith('tcp') ? 'TCP' : null,
    probeIp: src,
    probeAddresses: src ? [src] : [],
    targetIp,
    targetDomain: null,
    hops,
    error: stopReason === TraceStopReason.error && nothingSent ? `scamper stopped with an error before its first probe (stop_data ${String(record.stop_data ?? '')})` : null,
    stopReason,
  };
}
