import { expect } from 'vitest';
import type { IpEnricher } from '../../../subgraphs/traceroute/enrichment/ip-enricher.js';

/**
 * An independent reading of RIPE Atlas and scamper records, as the issue defines each figure:
 * deliberately plain, sharing no code with the importer, so that a stored trace can be held to it
 * (hop-fidelity.test.ts for the fixtures, scamper-namespaces.test.ts for scamper's live output).
 */
export type Json = Record<string, any>;
export interface Responder { ip: string; received: number; rtts: number[]; errors: string[] }
export interface Stray { kind: string; ip: string | null; lateBy: number | null; destination: string | null }
export interface Hop {
  hop: number; ip: string | null; rtts: (number | null)[]; rttAvg: number | null; sent: number; received: number; loss: number;
  late: number; duplicates: number; otherDestination: number; errors: string[]; responders: Responder[]; strayReplies: Stray[];
  ixp: string | null; asn: number | null;
}
export interface Trace { key: string; hopCount: number; respondingHops: number; loss: number; error: string | null; hops: Hop[] }

const round3 = (n: number) => Math.round(n * 1000) / 1000;
const avg = (xs: number[]) => (xs.length ? round3(xs.reduce((a, b) => a + b, 0) / xs.length) : null);

/** A hop from its probes' outcomes (address, rtt, error) and its stray answers, as the issue defines the figures. */
function hopFrom(hop: number, outcomes: { ip: string | null; rtt: number | null; err: string | null }[], stray: Stray[], sendErrors: string[], enricher: IpEnricher): Hop {
  const answers = outcomes.filter((o) => o.ip !== null);
  const responders: Responder[] = [];
  for (const a of answers) {
    let r = responders.find((x) => x.ip === a.ip);
    if (!r) responders.push((r = { ip: a.ip!, received: 0, rtts: [], errors: [] }));
    r.received++;
    if (a.rtt !== null) r.rtts.push(a.rtt);
    if (a.err !== null) r.errors.push(a.err);
  }
  responders.sort((a, b) => b.received - a.received);
  const main = responders[0] ?? null;
  return {
    hop,
    ip: main?.ip ?? null,
    rtts: outcomes.map((o) => (o.ip === null ? null : o.rtt)),
    rttAvg: main ? avg(main.rtts) : null,
    sent: outcomes.length,
    received: answers.length,
    loss: outcomes.length ? round3(1 - answers.length / outcomes.length) : 1,
    late: stray.filter((s) => s.kind === 'late').length,
    duplicates: stray.filter((s) => s.kind === 'duplicate').length,
    otherDestination: stray.filter((s) => s.kind === 'other_destination').length,
    errors: [...answers.flatMap((a) => (a.err === null ? [] : [a.err])), ...sendErrors],
    responders,
    strayReplies: stray,
    ixp: null,
    asn: main ? enricher.lookup(main.ip).asn : null,
  };
}

/** RIPE Atlas: one probe per entry that is an answer or a `*`; late, dup and edst answers are stray; `error` entries are send errors. */
export function readAtlas(record: Json, enricher: IpEnricher): Trace {
  const hops = (record.result ?? []).map((h: Json) => {
    const outcomes: { ip: string | null; rtt: number | null; err: string | null }[] = [];
    const stray: Stray[] = [];
    const sendErrors: string[] = h.error ? [h.error] : [];
    for (const e of h.result ?? []) {
      if (e.x === '*') outcomes.push({ ip: null, rtt: null, err: null });
      else if (e.error && !e.from) sendErrors.push(e.error);
      else if (e.dup) stray.push({ kind: 'duplicate', ip: e.from, lateBy: null, destination: e.edst ?? null });
      else if (e.late !== undefined) stray.push({ kind: 'late', ip: e.from, lateBy: e.late, destination: e.edst ?? null });
      else if (e.edst) stray.push({ kind: 'other_destination', ip: e.from, lateBy: null, destination: e.edst });
      else outcomes.push({ ip: e.from, rtt: e.rtt ?? null, err: e.err === undefined ? null : String(e.err) });
    }
    return hopFrom(h.hop, outcomes, stray, sendErrors, enricher);
  });
  return summed(`atlas:${record.msm_id}:${record.prb_id}:${record.timestamp * 1000}`, hops);
}

/** scamper: every TTL from firsthop to hop_count; a TTL's answers by probe_id, the unanswered ids up to its probe count are timeouts. */
export function readScamper(record: Json, host: string | null, enricher: IpEnricher): Trace {
  const replies: Json[] = record.hops ?? [];
  const first = record.firsthop ?? 1;
  const last = Math.max(record.hop_count, ...replies.map((r) => r.probe_ttl));
  const ttls = Array.from({ length: last - first + 1 }, (_, i) => first + i);
  // With -Q scamper sends every attempt at every TTL; probe_count, all probes sent, shows which.
  const everyAttempt = record.probe_count === ttls.length * record.attempts;
  const hops = ttls.map((ttl) => {
    const here = replies.filter((r) => r.probe_ttl === ttl);
    const sent = everyAttempt || !here.length ? record.attempts : Math.max(...here.map((r) => r.probe_id));
    const outcomes = Array.from({ length: sent }, (_, i) => {
      // "*" or "": scamper kept the probe but not who answered.
      const r = here.find((x) => x.probe_id === i + 1 && x.addr && x.addr !== '*');
      if (!r) return { ip: null, rtt: null, err: null };
      const unreachable = (record.dst.includes(':') ? 1 : 3) === r.icmp_type;
      const portFromTarget = unreachable && r.addr === record.dst && r.icmp_code === (record.dst.includes(':') ? 4 : 3);
      const letters: Record<number, string> = record.dst.includes(':') ? { 0: 'N', 1: 'A', 2: 'h', 3: 'H', 4: 'p' } : { 0: 'N', 1: 'H', 2: 'P', 3: 'p', 13: 'A' };
      return { ip: r.addr, rtt: r.rtt, err: unreachable && !portFromTarget ? (letters[r.icmp_code] ?? String(r.icmp_code)) : null };
    });
    return hopFrom(ttl, outcomes, [], [], enricher);
  });
  return summed(`scamper:${host}:${record.src}:${record.dst}:${record.start.sec * 1000 + Math.floor(record.start.usec / 1000)}`, hops);
}

function summed(key: string, hops: Hop[]): Trace {
  const sent = hops.reduce((n, h) => n + h.sent, 0);
  const received = hops.reduce((n, h) => n + h.received, 0);
  const error = sent === 0 && hops.some((h) => h.errors.length) ? hops.flatMap((h) => h.errors).join('; ') : null;
  return { key, hopCount: hops.length, respondingHops: hops.filter((h) => h.received > 0).length, loss: sent ? round3(1 - received / sent) : 1, error, hops };
}


/** The fields of a stored trace (GraphQL) that expectSameTrace compares. */
export const TRACE_FIELDS = `status stopReason error hopCount respondingHops loss rttMs asPath probeAsn
  hops { hop ip rtts rttAvg sent received loss late duplicates otherDestination errors ixp asn
    responders { ip received rtts errors ixp asn } strayReplies { kind ip lateBy destination } }`;

/** Holds a stored trace (TRACE_FIELDS) to the independent reading of its record, hop by hop. */
export function expectSameTrace(got: Json | undefined, trace: Trace): void {
  expect(got, trace.key).toBeDefined();
  expect({ key: trace.key, hopCount: got!.hopCount, respondingHops: got!.respondingHops, loss: got!.loss, error: got!.error }).toEqual({
    key: trace.key, hopCount: trace.hopCount, respondingHops: trace.respondingHops, loss: trace.loss, error: trace.error,
  });
  for (const [index, hop] of trace.hops.entries()) {
    const { ixp: _ixp, ...want } = hop;
    const { ixp: _got, responders, ...rest } = got!.hops[index];
    expect({ key: trace.key, ...rest, responders: responders.map((r: Json) => ({ ip: r.ip, received: r.received, rtts: r.rtts, errors: r.errors })) }).toEqual({ key: trace.key, ...want });
  }
}
