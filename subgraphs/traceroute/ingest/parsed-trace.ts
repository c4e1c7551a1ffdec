import type { TraceSource } from '../trace/trace-source.js';
import type { TraceStopReason } from '../trace/trace-stop-reason.js';

/**
 * What one entry of a hop's record is. `reply` and `timeout` are the outcome of one probe each;
 * the rest are set apart: `late` (RIPE `late`: the answer to an earlier probe), `duplicate`
 * (RIPE `dup`, or a second scamper reply to one probe), `other_destination` (RIPE `edst`: the
 * quoted packet was addressed elsewhere) and `error` (the probe could not be sent).
 */
export type ReplyKind = 'reply' | 'timeout' | 'late' | 'duplicate' | 'other_destination' | 'error';

/** One entry of a hop as the source recorded it. */
export interface ParsedReply {
  kind: ReplyKind;
  ip: string | null;
  rtt: number | null;
  /** The ICMP error in RIPE Atlas's words: N, H, A, P, p, h, n, or the unreachable code as a number. */
  err: string | null;
  icmpType: number | null;
  icmpCode: number | null;
  /** RIPE `late`: how many probes earlier the answered one was. */
  lateBy: number | null;
  /** RIPE `edst`: where the packet that drew this answer was going instead of the target. */
  destination: string | null;
  replyTtl: number | null;
  /** scamper's probe_id (1 for the first attempt at this TTL). */
  probeId: number | null;
  /** Why the probe could not be sent (RIPE `{error}` in a hop's result). */
  error: string | null;
  hostname: string | null;
  mpls: number[];
}

export interface ParsedHop {
  hop: number;
  /** Probes sent at this TTL, read from the source's own fields (see each parser). */
  sent: number;
  replies: ParsedReply[];
  /** A hop-level error (RIPE `{hop, error}`): the probe could not send at this TTL. */
  error: string | null;
}

/**
 * What the source itself says about the probe and the target at the time of the measurement
 * (RIPE Atlas's probe section and meta_data); each figure given wins over today's databases.
 */
export interface SourceMetadata {
  probeCountry: string | null;
  probeAsn: number | null;
  probeLatitude: number | null;
  probeLongitude: number | null;
  targetAsn: number | null;
}

/** A traceroute as read from a source, before enrichment and scoring. */
export interface ParsedTrace {
  source: TraceSource;
  /** `<source>:<measurement>:<probe>`: with measuredAt, the trace's identity. */
  measurementKey: string;
  /** `<source>:<probe>`: whose baseline the trace is compared with. */
  probeKey: string;
  msmId: number | null;
  probeId: number | null;
  measuredAt: Date;
  af: 4 | 6;
  protocol: string | null;
  /** The probe's public address when known, else its source address. */
  probeIp: string | null;
  /** Every address the probe is known by (public and source): a hop answering from one is NAT echoing the probe. */
  probeAddresses: string[];
  /** Null when the measurement failed before it had an address (name resolution failed). */
  targetIp: string | null;
  targetDomain: string | null;
  hops: ParsedHop[];
  /** Why the measurement failed before its first probe went out; null when it ran. */
  error: string | null;
  /** Why the trace stopped: scamper's stop_reason, or what a RIPE Atlas result shows. */
  stopReason: TraceStopReason;
  /** Probe and target figures from the source, when it carries them. */
  metadata?: SourceMetadata | null;
  /** The record exactly as the imported file has it; null for generated traces. */
  sourceRecord?: string | null;
}

/** A reply with every optional field empty, for the parsers to fill in. */
export function blankReply(kind: ReplyKind): ParsedReply {
  return { kind, ip: null, rtt: null, err: null, icmpType: null, icmpCode: null, lateBy: null, destination: null, replyTtl: null, probeId: null, error: null, hostname: null, mpls: [] };
}

/** A record that could not be imported, with where it was and why. */
export class RecordRejection extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecordRejection';
  }
}
