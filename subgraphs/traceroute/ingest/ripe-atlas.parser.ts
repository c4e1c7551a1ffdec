import { isIP } from 'node:net';
import { isPrivateAddress } from '../enrichment/ip-enricher.js';
import { canonicalIp } from '../trace/canonical-ip.js';
import { atlasMetadata } from './atlas-metadata.js';
import { TraceSource } from '../trace/trace-source.js';
import { TraceStopReason } from '../trace/trace-stop-reason.js';
import { blankReply, RecordRejection, type ParsedHop, type ParsedReply, type ParsedTrace } from './parsed-trace.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** True when `record` looks like a RIPE Atlas result of any measurement type. */
export function isAtlasResult(record: Json): boolean {
  return 'msm_id' in record && 'prb_id' in record;
}

function mplsLabels(icmpext: unknown): number[] {
  // icmpext: {version, rfc4884, obj: [{class: 1, type: 1, mpls: [{label, exp, s, ttl}]}]}
  if (!isObject(icmpext) || !Array.isArray(icmpext.obj)) return [];
  const labels: number[] = [];
  for (const obj of icmpext.obj) {
    if (isObject(obj) && Array.isArray(obj.mpls)) {
      for (const entry of obj.mpls) if (isObject(entry) && Number.isInteger(entry.label)) labels.push(entry.label as number);
    }
  }
  return labels;
}

/**
 * One entry of a hop's `result`: a timeout (`x: "*"`), a probe that could not be sent (`error`), or
 * an answer, which is set apart when it is `late` (no RTT: it answers an earlier probe), a `dup`
 * or carries `edst` (the quoted packet was going elsewhere).
 */
function reply(raw: unknown, where: string): ParsedReply {
  if (!isObject(raw)) throw new RecordRejection(`${where}: a reply is not an object`);
  if (raw.x === '*') return blankReply('timeout');
  if (typeof raw.error === 'string' && raw.from === undefined) return { ...blankReply('error'), error: raw.error };
  const from = typeof raw.from === 'string' ? raw.from : null;
  if (from !== null && !isIP(from)) throw new RecordRejection(`${where}: "${from}" is not an IP address`);
  if (from === null) return blankReply('timeout');
  const ip = canonicalIp(from);
  const late = typeof raw.late === 'number' || raw.late === true;
  const destination = typeof raw.edst === 'string' && raw.edst !== '' ? raw.edst : null;
  const kind = raw.dup === true || raw.dup === 1 ? 'duplicate' : late ? 'late' : destination !== null ? 'other_destination' : 'reply';
  const rtt = !late && typeof raw.rtt === 'number' && Number.isFinite(raw.rtt) && raw.rtt >= 0 ? raw.rtt : null;
  return {
    ...blankReply(kind),
    ip,
    rtt,
    // err is a letter (N, H, A, P, p, h, n: unreachable kinds) or the ICMP code as a number.
    err: raw.err === undefined || raw.err === null ? null : String(raw.err),
    lateBy: typeof raw.late === 'number' ? raw.late : late ? 1 : null,
    destination,
    replyTtl: Number.isInteger(raw.ttl) ? (raw.ttl as number) : null,
    mpls: mplsLabels(raw.icmpext),
  };
}

/** Probes sent at a hop: one per entry that is a probe's own outcome (an answer or a timeout). */
const probesSent = (replies: ParsedReply[]) => replies.filter((r) => r.kind === 'reply' || r.kind === 'timeout').length;

/**
 * Why an Atlas traceroute stopped, read from its hops as the probe decides it: the target
 * answered; a probe could not be sent; an ICMP unreachable at its last hop; the gap limit (the
 * probe then sends one last probe as hop 255); else it ran out of hops.
 */
function stopReasonOf(hops: ParsedHop[], targetIp: string): TraceStopReason {
  const counted = hops.flatMap((h) => h.replies.filter((r) => r.kind === 'reply'));
  if (counted.some((r) => r.ip === targetIp && r.err === null)) return TraceStopReason.completed;
  if (hops.some((h) => h.error !== null || h.replies.some((r) => r.kind === 'error'))) return TraceStopReason.error;
  const last = hops.filter((h) => h.hop !== 255).at(-1);
  if (last?.replies.some((r) => r.kind === 'reply' && r.err !== null)) return TraceStopReason.unreach;
  if (hops.some((h) => h.hop === 255)) return TraceStopReason.gaplimit;
  return hops.length ? TraceStopReason.hoplimit : TraceStopReason.none;
}

/** The errors of a trace that never sent a probe (bind or sendto failed at its first hop), joined; else null. */
function failureBeforeFirstProbe(record: Json, hops: ParsedHop[]): string | null {
  if (hops.some((h) => h.sent > 0)) return null;
  const texts = [
    ...(typeof record.error === 'string' ? [record.error] : isObject(record.error) ? [JSON.stringify(record.error)] : []),
    ...hops.flatMap((h) => [...(h.error ? [h.error] : []), ...h.replies.flatMap((r) => (r.error ? [r.error] : []))]),
  ];
  return texts.length ? [...new Set(texts)].join('; ').slice(0, 500) : null;
}

const domainOf = (name: string | null) => (name ? name.toLowerCase().slice(0, 253) : null);

/**
 * Why a result without a target address never ran, when it says so: a top-level `error`, or a
 * `result` of bare `{error}` entries (no hop answered, e.g. "name resolution failed"). Null when
 * the record names no target domain or no error: then it is malformed, not a failed measurement.
 */
function failureBeforeAnyHop(record: Json): { error: string; domain: string } | null {
  const domain = typeof record.dst_name === 'string' && record.dst_name.trim() !== '' && !isIP(record.dst_name) ? domainOf(record.dst_name.trim()) : null;
  if (!domain) return null;
  const hops = Array.isArray(record.result) ? record.result : [];
  const texts = [
    ...(typeof record.error === 'string' ? [record.error] : isObject(record.error) ? [JSON.stringify(record.error)] : []),
    ...hops.flatMap((hop) => (isObject(hop) && typeof hop.error === 'string' && !Array.isArray(hop.result) ? [hop.error] : [])),
  ];
  const answered = hops.some((hop) => isObject(hop) && Array.isArray(hop.result) && hop.result.some((r) => isObject(r) && typeof r.from === 'string'));
  if (!texts.length || answered) return null;
  return { error: [...new Set(texts)].join('; ').slice(0, 500), domain };
}

/**
 * A RIPE Atlas traceroute result (every firmware: `x: "*"` silences, `err`, `late`, `dup`, `edst`,
 * `icmpext`, IPv6, hop-level and reply-level `error`, the 255 end marker) as a ParsedTrace, with
 * what its file says of the probe and the target (`envelope`: the rest of a `{results}` file).
 * Throws RecordRejection for another measurement type or a malformed result.
 */
export function parseAtlasTraceroute(record: Json, envelope?: Json): ParsedTrace {
  if (record.type !== undefined && record.type !== 'traceroute') {
    throw new RecordRejection(`a RIPE Atlas "${String(record.type)}" result, not a traceroute`);
  }
  if (!Array.isArray(record.result) && record.error === undefined) {
    throw new RecordRejection(record.type === undefined && 'avg' in record ? 'a RIPE Atlas ping result, not a traceroute' : 'no "result" array of hops');
  }
  const msmId = record.msm_id;
  const probeId = record.prb_id;
  if (!Number.isInteger(msmId) || !Number.isInteger(probeId)) throw new RecordRejection('msm_id and prb_id must be integers');
  const timestamp = record.timestamp;
  if (typeof timestamp !== 'number' || !Number.isFinite(timestamp) || timestamp <= 0) throw new RecordRejection('timestamp must be a Unix time');
  const measuredAt = new Date(Math.round(timestamp * 1000));
  if (Number.isNaN(measuredAt.getTime()) || measuredAt.getUTCFullYear() > 9999) throw new RecordRejection('timestamp is out of range');
  // Addresses in one spelling (canonicalIp), so the target and the hops compare and search as one.
  const targetIp = typeof record.dst_addr === 'string' ? canonicalIp(record.dst_addr) : '';
  const from = typeof record.from === 'string' && isIP(record.from) ? canonicalIp(record.from) : null;
  const src = typeof record.src_addr === 'string' && isIP(record.src_addr) ? canonicalIp(record.src_addr) : null;
  // `from` is the probe's public address as Atlas saw it; src_addr is often a private one.
  const probeIp = from && !isPrivateAddress(from) ? from : (src ?? from);
  const measurement = {
    source: TraceSource.RIPE_ATLAS,
    measurementKey: `atlas:${msmId}:${probeId}`,
    probeKey: `atlas:${probeId}`,
    msmId: msmId as number,
    probeId: probeId as number,
    measuredAt,
    protocol: typeof record.proto === 'string' ? record.proto.toUpperCase() : null,
    probeIp,
    probeAddresses: [...new Set([from, src].filter((ip): ip is string => ip !== null))],
  };
  if (!isIP(targetIp)) {
    // A probe that could not even start (its resolver failed on dst_name) still made a measurement:
    // it is stored as a failed trace so failure rates count it.
    const failure = failureBeforeAnyHop(record);
    if (failure === null) throw new RecordRejection('dst_addr is missing or not an IP address');
    const af = record.af === 6 ? 6 : 4;
    return {
      ...measurement,
      af,
      metadata: atlasMetadata(record, envelope, af),
      targetIp: null,
      targetDomain: failure.domain,
      hops: [],
      error: failure.error,
      stopReason: TraceStopReason.error,
    };
  }
  const rawHops = Array.isArray(record.result) ? record.result : [];
  if (!Array.isArray(record.result) && typeof record.error !== 'string' && !isObject(record.error)) throw new RecordRejection('no "result" array of hops');
  const af = record.af === 6 || isIP(targetIp) === 6 ? 6 : 4;
  const hops: ParsedHop[] = rawHops.map((rawHop, index): ParsedHop => {
    const where = `hop #${index + 1}`;
    if (!isObject(rawHop) || !Number.isInteger(rawHop.hop) || (rawHop.hop as number) < 0 || (rawHop.hop as number) > 255) {
      throw new RecordRejection(`${where}: "hop" must be an integer from 0 to 255`);
    }
    if (typeof rawHop.error === 'string' && !Array.isArray(rawHop.result)) return { hop: rawHop.hop as number, sent: 0, replies: [], error: rawHop.error };
    if (!Array.isArray(rawHop.result)) throw new RecordRejection(`${where}: no "result" array`);
    const replies = rawHop.result.map((r) => reply(r, where));
    return { hop: rawHop.hop as number, sent: probesSent(replies), replies, error: typeof rawHop.error === 'string' ? rawHop.error : null };
  });
  const dstName = typeof record.dst_name === 'string' && record.dst_name !== targetIp && !isIP(record.dst_name) ? record.dst_name : null;
  const error = failureBeforeFirstProbe(record, hops);
  return {
    ...measurement,
    af,
    metadata: atlasMetadata(record, envelope, af),
    targetIp,
    targetDomain: domainOf(dstName),
    hops,
    error,
    stopReason: error !== null ? TraceStopReason.error : stopReasonOf(hops, targetIp),
  };
}
