import { isIP } from 'node:net';
import { isPrivateAddress } from '../enrichment/ip-enricher.js';
import { TraceSource } from '../trace/trace-source.js';
import { RecordRejection, type ParsedHop, type ParsedReply, type ParsedTrace } from './parsed-trace.js';

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

function reply(raw: unknown, where: string): ParsedReply {
  if (!isObject(raw)) throw new RecordRejection(`${where}: a reply is not an object`);
  if (raw.x === '*') return { ip: null, rtt: null, late: false, err: null, mpls: [] };
  const ip = typeof raw.from === 'string' ? raw.from : null;
  if (ip !== null && !isIP(ip)) throw new RecordRejection(`${where}: "${ip}" is not an IP address`);
  const rtt = typeof raw.rtt === 'number' && Number.isFinite(raw.rtt) && raw.rtt >= 0 ? raw.rtt : null;
  const late = typeof raw.late === 'number' || raw.late === true;
  // err is a letter (N, H, A, P, p: unreachable kinds) or the ICMP code as a number.
  const err = raw.err === undefined ? null : String(raw.err);
  // A `late` reply came after the probe gave up: its address counts, its RTT is unknown.
  return { ip, rtt: late ? null : rtt, late, err, mpls: mplsLabels(raw.icmpext) };
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
 * A RIPE Atlas traceroute result (every firmware: `x: "*"` silences, `err`, `late`, `icmpext`,
 * IPv6, hop-level `error`, the 255 end marker) as a ParsedTrace. Throws RecordRejection for
 * another measurement type or a malformed result.
 */
export function parseAtlasTraceroute(record: Json): ParsedTrace {
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
  const targetIp = typeof record.dst_addr === 'string' ? record.dst_addr : '';
  const from = typeof record.from === 'string' && isIP(record.from) ? record.from : null;
  const src = typeof record.src_addr === 'string' && isIP(record.src_addr) ? record.src_addr : null;
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
  };
  if (!isIP(targetIp)) {
    // A probe that could not even start (its resolver failed on dst_name) still made a measurement:
    // it is stored as a failed trace so failure rates count it.
    const failure = failureBeforeAnyHop(record);
    if (failure === null) throw new RecordRejection('dst_addr is missing or not an IP address');
    return {
      ...measurement,
      af: record.af === 6 ? 6 : 4,
      targetIp: null,
      targetDomain: failure.domain,
      hops: [],
      reachedTarget: false,
      error: failure.error,
    };
  }
  if (!Array.isArray(record.result)) throw new RecordRejection('no "result" array of hops');
  const af = record.af === 6 || isIP(targetIp) === 6 ? 6 : 4;
  const hops: ParsedHop[] = record.result.map((rawHop, index): ParsedHop => {
    const where = `hop #${index + 1}`;
    if (!isObject(rawHop) || !Number.isInteger(rawHop.hop) || (rawHop.hop as number) < 0 || (rawHop.hop as number) > 255) {
      throw new RecordRejection(`${where}: "hop" must be an integer from 0 to 255`);
    }
    if (typeof rawHop.error === 'string') return { hop: rawHop.hop as number, hostname: null, replies: [], error: rawHop.error };
    if (!Array.isArray(rawHop.result)) throw new RecordRejection(`${where}: no "result" array`);
    return { hop: rawHop.hop as number, hostname: null, replies: rawHop.result.map((r) => reply(r, where)), error: null };
  });
  const dstName = typeof record.dst_name === 'string' && record.dst_name !== targetIp && !isIP(record.dst_name) ? record.dst_name : null;
  return {
    ...measurement,
    af,
    targetIp,
    targetDomain: domainOf(dstName),
    hops,
    reachedTarget: null,
    error: null,
  };
}
