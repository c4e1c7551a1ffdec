import type { IpEnricher, IpInfo } from '../enrichment/ip-enricher.js';
import { ixpOf } from '../enrichment/ixp-prefixes.js';
import { directionOf, HOME_COUNTRY } from '../scoring/direction.js';
import { scoreTrace, type Baseline } from '../scoring/anomaly.js';
import type { AnomalyData } from '../trace/anomaly-components.type.js';
import type { HopResponderData } from '../trace/hop-responder.type.js';
import type { HopData } from '../trace/hop.type.js';
import type { ProvenanceData } from '../trace/trace-provenance.type.js';
import type { StrayReplyKind } from '../trace/stray-reply-kind.js';
import type { TraceDirection } from '../trace/trace-direction.js';
import type { TraceSource } from '../trace/trace-source.js';
import { TraceStatus } from '../trace/trace-status.js';
import { TraceStopReason } from '../trace/trace-stop-reason.js';
import type { ParsedHop, ParsedReply, ParsedTrace } from './parsed-trace.js';
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
  stop_reason: TraceStopReason;
  hop_ips: string[];
  hop_asns: number[];
  source_record: string | null;
  provenance: ProvenanceData;
}

const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : null);
const round3 = (value: number | null) => (value === null ? null : Math.round(value * 1000) / 1000);
const cut = (value: string | null, length: number) => (value === null ? null : value.slice(0, length));

/** Each address that answered in time with its answers, most answers first (the first to answer among equals). */
function respondersOf(counted: ParsedReply[], enricher: IpEnricher): HopResponderData[] {
  const byIp = new Map<string, ParsedReply[]>();
  for (const reply of counted) byIp.set(reply.ip!, [...(byIp.get(reply.ip!) ?? []), reply]);
  return [...byIp]
    .map(([ip, replies]) => {
      const info = enricher.lookup(ip);
      const rtts = replies.flatMap((r) => (r.rtt === null ? [] : [r.rtt]));
      return {
        ip,
        hostname: replies.find((r) => r.hostname)?.hostname ?? null,
        rtts,
        rtt_avg: round3(mean(rtts)),
        received: replies.length,
        errors: replies.flatMap((r) => (r.err ? [r.err] : [])),
        private: info.private,
        ixp: ixpOf(ip),
        country: info.country,
        city: info.city,
        latitude: info.latitude,
        longitude: info.longitude,
        asn: info.asn,
        as_name: info.asName,
        mpls: [...new Set(replies.flatMap((r) => r.mpls))],
      };
    })
    .sort((a, b) => b.received - a.received);
}

/** A hop as stored: its probes' outcomes summed up, each responder on its own, stray answers apart. */
function hopOf(hop: ParsedHop, enricher: IpEnricher): HopData {
  // One outcome per probe sent, in order: its answer (by any responder) or its timeout.
  const outcomes = hop.replies.filter((r) => r.kind === 'reply' || r.kind === 'timeout');
  const counted = outcomes.filter((r) => r.kind === 'reply' && r.ip !== null);
  const stray = hop.replies.filter((r) => r.kind === 'late' || r.kind === 'duplicate' || r.kind === 'other_destination');
  const responders = respondersOf(counted, enricher);
  const main = responders[0] ?? null;
  const rtts = outcomes.map((r) => (r.kind === 'reply' ? r.rtt : null));
  const received = Math.min(counted.length, hop.sent);
  const sendErrors = [...(hop.error ? [hop.error] : []), ...hop.replies.flatMap((r) => (r.kind === 'error' && r.error ? [r.error] : []))];
  return {
    hop: hop.hop,
    ip: main?.ip ?? null,
    hostname: main?.hostname ?? null,
    rtts,
    // ip's own mean: two routers' RTTs are never credited to one address (each responder has its own).
    rtt_avg: main?.rtt_avg ?? null,
    sent: hop.sent,
    received,
    loss: hop.sent ? round3(1 - received / hop.sent)! : 1,
    late: stray.filter((r) => r.kind === 'late').length,
    errors: [...counted.flatMap((r) => (r.err ? [r.err] : [])), ...sendErrors],
    private: main?.private ?? false,
    country: main?.country ?? null,
    city: main?.city ?? null,
    latitude: main?.latitude ?? null,
    longitude: main?.longitude ?? null,
    asn: main?.asn ?? null,
    as_name: main?.as_name ?? null,
    mpls: [...new Set(counted.flatMap((r) => r.mpls))],
    ixp: main?.ixp ?? null,
    responders,
    duplicates: stray.filter((r) => r.kind === 'duplicate').length,
    other_destination: stray.filter((r) => r.kind === 'other_destination').length,
    stray_replies: stray.map((r) => ({ kind: r.kind as StrayReplyKind, ip: r.ip, rtt: r.rtt, late_by: r.lateBy, destination: r.destination, err: r.err })),
  };
}

/**
 * The status rule: completed when the target itself answered in time without an ICMP error at
 * some hop (or the source says it stopped for that reason); failed otherwise, which covers a path
 * that ends in silence (Atlas's hop 255 of stars), an unreachable error, a measurement that
 * stopped at its TTL limit and one that failed before any hop (no target address).
 */
export function statusOf(parsed: ParsedTrace): TraceStatus {
  if (parsed.targetIp === null || parsed.error !== null) return TraceStatus.failed;
  const answered = parsed.hops.some((hop) => hop.replies.some((r) => r.kind === 'reply' && r.ip === parsed.targetIp && !r.err));
  return answered || parsed.stopReason === TraceStopReason.completed ? TraceStatus.completed : TraceStatus.failed;
}

/**
 * The networks a trace crossed: the probe's AS, then each hop's, repeats in a row merged. A hop
 * says nothing about that when it is silent, private, on an exchange's peering LAN (the LAN
 * belongs to the exchange, not to a network crossed) or the probe's own address answering back
 * through its NAT.
 */
export function asPathOf(probeAsn: number | null, hops: HopData[], probeAddresses: string[]): number[] {
  const own = new Set(probeAddresses);
  const asns = hops.filter((h) => h.ip !== null && !h.private && !h.ixp && !own.has(h.ip)).map((h) => h.asn);
  const path: number[] = [];
  for (const asn of [probeAsn, ...asns]) if (asn !== null && path[path.length - 1] !== asn) path.push(asn);
  return path;
}

/** The addresses that answered in time at some hop and their ASNs: what "passes through" searches. */
function passedThrough(hops: HopData[]): { hop_ips: string[]; hop_asns: number[] } {
  const responders = hops.flatMap((h) => h.responders ?? []);
  return {
    hop_ips: [...new Set(responders.map((r) => r.ip))],
    hop_asns: [...new Set(responders.flatMap((r) => (r.asn === null ? [] : [r.asn])))],
  };
}

/**
 * Where the probe and the target were and in which networks, and what says so. What the source
 * said at the time (its metadata) wins over today's databases figure by figure; a database city
 * or position in another country than the source's is dropped rather than mixed with it.
 */
function endpointsOf(parsed: ParsedTrace, hops: HopData[], enricher: IpEnricher): { probe: IpInfo; target: IpInfo; provenance: ProvenanceData } {
  const meta = parsed.metadata ?? null;
  const SOURCE = 'source metadata';
  const { location, asn } = enricher.sources;
  // A probe behind NAT reports a private source: its first public hop stands in for where it is.
  let found = enricher.lookup(parsed.probeIp);
  if (found.private) {
    const firstPublic = hops.find((h) => h.ip && !h.private);
    if (firstPublic) found = enricher.lookup(firstPublic.ip);
  }
  const elsewhere = meta?.probeCountry != null && found.country !== meta.probeCountry;
  const coordinates = meta?.probeLatitude != null ? 'source' : elsewhere || found.latitude === null ? null : 'database';
  const probe: IpInfo = {
    private: found.private,
    country: meta?.probeCountry ?? found.country,
    city: elsewhere ? null : found.city,
    latitude: coordinates === 'source' ? meta!.probeLatitude : coordinates === 'database' ? found.latitude : null,
    longitude: coordinates === 'source' ? meta!.probeLongitude : coordinates === 'database' ? found.longitude : null,
    asn: meta?.probeAsn ?? found.asn,
    asName: meta?.probeAsn != null ? enricher.asName(meta.probeAsn) : found.asName,
  };
  const looked = enricher.lookup(parsed.targetIp);
  const target: IpInfo = meta?.targetAsn != null ? { ...looked, asn: meta.targetAsn, asName: enricher.asName(meta.targetAsn) } : looked;
  const from = (source: boolean, value: unknown, database: string) => (source ? SOURCE : value === null ? null : database);
  const responders = hops.flatMap((h) => h.responders ?? []);
  return {
    probe,
    target,
    provenance: {
      probe_country: from(meta?.probeCountry != null, probe.country, location),
      probe_city: from(false, probe.city, location),
      probe_coordinates: coordinates === 'source' ? SOURCE : coordinates && location,
      probe_asn: from(meta?.probeAsn != null, probe.asn, asn),
      target_location: from(false, looked.country ?? looked.city, location),
      target_asn: from(meta?.targetAsn != null, target.asn, asn),
      hop_location: responders.some((r) => r.country !== null || r.latitude !== null) ? location : null,
      hop_asn: responders.some((r) => r.asn !== null) ? asn : null,
    },
  };
}

/** Enriches and scores a parsed trace against its baseline; the row to store. */
export function buildTraceRow(parsed: ParsedTrace, enricher: IpEnricher, baseline: Baseline | null): TraceRow {
  const hops = parsed.hops.map((hop) => hopOf(hop, enricher));
  const sent = hops.reduce((n, h) => n + h.sent, 0);
  const received = hops.reduce((n, h) => n + h.received, 0);
  const status = statusOf(parsed);
  const { probe, target, provenance } = endpointsOf(parsed, hops, enricher);
  const asPath = asPathOf(probe.asn, hops, parsed.probeAddresses);
  // The target's own answers, where it first answered without an error.
  const targetAnswer = parsed.targetIp === null ? undefined : hops.flatMap((h) => h.responders ?? []).find((r) => r.ip === parsed.targetIp && !r.errors.length && r.rtt_avg !== null);
  const rttMs = targetAnswer?.rtt_avg ?? null;
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
    stop_reason: parsed.stopReason,
    ...passedThrough(hops),
    source_record: parsed.sourceRecord ?? null,
    provenance,
  };
}
