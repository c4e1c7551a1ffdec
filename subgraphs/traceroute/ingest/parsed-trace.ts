import type { TraceSource } from '../trace/trace-source.js';

/** One answer (or silence) to one probe packet. */
export interface ParsedReply {
  ip: string | null;
  rtt: number | null;
  late: boolean;
  err: string | null;
  mpls: number[];
}

export interface ParsedHop {
  hop: number;
  hostname: string | null;
  replies: ParsedReply[];
  /** A hop-level error (RIPE `{hop, error}`): the probe could not send at this TTL. */
  error: string | null;
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
  /** Null when the measurement failed before it had an address (name resolution failed). */
  targetIp: string | null;
  targetDomain: string | null;
  hops: ParsedHop[];
  /** Why the measurement failed before any hop; null when it ran. */
  error: string | null;
  /** What the source says about reaching the target (scamper's stop_reason); null to infer from hops. */
  reachedTarget: boolean | null;
}

/** A record that could not be imported, with where it was and why. */
export class RecordRejection extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecordRejection';
  }
}
