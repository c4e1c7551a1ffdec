import type { IpEnricher } from '../enrichment/ip-enricher.js';
import { directionOf, HOME_COUNTRY } from '../scoring/direction.js';
import { scoreTrace, type Baseline } from '../scoring/anomaly.js';
import type { AnomalyData } from '../trace/anomaly-components.type.js';
import type { HopData } from '../trace/hop.type.js';
import type { TraceDirection } from '../trace/trace-direction.js';
import type { TraceSource } from '../trace/trace-source.js';
import { TraceStatus } from '../trace/trace-status.js';
import type { ParsedTrace } from './parsed-trace.js';
import { uuidV7 } from '../../shared/uuid-v7.js';

/** A trace ready to store: the columns of `traceroute.trace`, snake_case. */
export interface TraceRow {
  id: string;
  measured_at: string;
  measurement_key: string;
  source: TraceSource;
  msm_id: number | null;
  probe_id: number | null;
  direction: TraceDirection;
  status: TraceStatus;
  af: number;
  protocol: string | null;
  probe_ip: string | null;
  probe_city: string | null;
  probe_country: string | null;
  probe_asn: number | null;
  probe_as_name: string | null;
  probe_lat: number | null;
  probe_lon: number | null;
  target_domain: string | null;
  target_ip: string | null;
  target_city: string | null;
  target_country: string | null;
  target_asn: number | null;
  target_as_name: string | null;
  target_lat: number | null;
  target_lon: number | null;
  hop_count: number;
  responding_hops: number;
  loss: number;
  rtt_ms: number | null;
  as_path: number[];
  anomaly_score: number;
  anomaly: AnomalyData;
  hops: HopData[];
  error: string | null;
}

const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : null);
const round3 = (value: number | null) => (value === null ? null : Math.round(value * 1000) / 1000);
const cut = (value: string | null, length: number) => (value === null ? null : value.slice(0, length));

/** The most frequent answering address of a hop (load-balanced hops answer from several). */
function mainAddress(ips: string[]): string | null {
  const counts = new Map<string, number>();
  let best: string | null = null;
  for (const ip of ips) {
    const n = (counts.get(ip) ?? 0) + 1;
    counts.set(ip, n);
    if (!best || n > counts.get(best)!) best = ip;
  }
  return best;
}

/**
 * The status rule: completed when the target itself answered at some hop (or scamper says it
 * stopped for that reason); failed otherwise, which covers a path that ends in silence (Atlas's
 * hop 255 of stars), an unreachable error, a measurement that stopped at its TTL limit and one
 * that failed before any hop (no target address).
 */
export function statusOf(parsed: ParsedTrace): TraceStatus {
  if (parsed.targetIp === null || parsed.error !== null) return TraceStatus.failed;
  const answered = parsed.hops.some((hop) => hop.replies.some((r) => r.ip === parsed.targetIp && !r.err));
  return answered || parsed.reachedTarget === true ? TraceStatus.completed : TraceStatus.failed;
}

/** Enriches and scores a parsed trace against its baseline; the row to store. */
export function buildTraceRow(parsed: ParsedTrace, enricher: IpEnricher, baseline: Baseline | null): TraceRow {
  let sent = 0;
  let received = 0;
  const hops: HopData[] = parsed.hops.map((hop) => {
    const answered = hop.replies.filter((r) => r.ip);
    const rtts = hop.replies.map((r) => (r.ip ? r.rtt : null));
    const measured = rtts.filter((r): r is number => r !== null);
    const ip = mainAddress(answered.map((r) => r.ip!));
    const info = enricher.lookup(ip);
    sent += hop.replies.length;
    received += answered.length;
    return {
      hop: hop.hop,
      ip,
      hostname: hop.hostname,
      rtts,
      rtt_avg: round3(mean(measured)),
      sent: hop.replies.length,
      received: answered.length,
      loss: hop.replies.length ? round3(1 - answered.length / hop.replies.length)! : 1,
      late: hop.replies.filter((r) => r.late).length,
      errors: [...hop.replies.flatMap((r) => (r.err ? [r.err] : [])), ...(hop.error ? [hop.error] : [])],
      private: ip === null ? false : info.private,
      country: info.country,
      city: info.city,
      latitude: info.latitude,
      longitude: info.longitude,
      asn: info.asn,
      as_name: info.asName,
      mpls: [...new Set(hop.replies.flatMap((r) => r.mpls))],
    };
  });
  const status = statusOf(parsed);
  // A probe behind NAT reports a private source: its first public hop stands in for where it is.
  let probe = enricher.lookup(parsed.probeIp);
  if (probe.private) {
    const firstPublic = hops.find((h) => h.ip && !h.private);
    if (firstPublic) probe = enricher.lookup(firstPublic.ip);
  }
  const target = enricher.lookup(parsed.targetIp);
  const asPath: number[] = [];
  for (const asn of [probe.asn, ...hops.map((h) => h.asn)]) {
    if (asn !== null && asPath[asPath.length - 1] !== asn) asPath.push(asn);
  }
  const targetHop = parsed.targetIp === null ? undefined : hops.find((h) => h.ip === parsed.targetIp && h.rtt_avg !== null);
  const rttMs = targetHop?.rtt_avg ?? null;
  const loss = sent ? 1 - received / sent : 1;
  const leavesCountry =
    probe.country === HOME_COUNTRY && target.country === HOME_COUNTRY && hops.some((h) => h.country && h.country !== HOME_COUNTRY);
  const { score, components } = scoreTrace({ rttMs, asPath, loss, reachedTarget: status === TraceStatus.completed, leavesCountry, baseline });
  return {
    id: uuidV7(parsed.measuredAt),
    measured_at: parsed.measuredAt.toISOString(),
    measurement_key: parsed.measurementKey,
    source: parsed.source,
    msm_id: parsed.msmId,
    probe_id: parsed.probeId,
    direction: directionOf(probe, target),
    status,
    af: parsed.af,
    protocol: cut(parsed.protocol, 16),
    probe_ip: parsed.probeIp,
    probe_city: cut(probe.city, 200),
    probe_country: probe.country,
    probe_asn: probe.asn,
    probe_as_name: cut(probe.asName, 200),
    probe_lat: probe.latitude,
    probe_lon: probe.longitude,
    target_domain: parsed.targetDomain,
    target_ip: parsed.targetIp,
    target_city: cut(target.city, 200),
    target_country: target.country,
    target_asn: target.asn,
    target_as_name: cut(target.asName, 200),
    target_lat: target.latitude,
    target_lon: target.longitude,
    hop_count: hops.length,
    responding_hops: hops.filter((h) => h.received > 0).length,
    loss: round3(loss)!,
    rtt_ms: rttMs,
    as_path: asPath,
    anomaly_score: score,
    anomaly: components,
    hops,
    error: cut(parsed.error, 500),
  };
}
