import { registerEnumType } from '../../shared/type-graphql.js';

/**
 * Why a traceroute stopped, in scamper's words (its stop_reason, lower case). A RIPE Atlas result
 * has no such field; the importer reads it from the result (ingest/ripe-atlas.parser.ts).
 */
export enum TraceStopReason {
  completed = 'completed',
  unreach = 'unreach',
  icmp = 'icmp',
  loop = 'loop',
  gaplimit = 'gaplimit',
  error = 'error',
  hoplimit = 'hoplimit',
  gss = 'gss',
  halted = 'halted',
  none = 'none',
}

registerEnumType(TraceStopReason, {
  name: 'TraceStopReason',
  description: 'Why a traceroute stopped (scamper stop_reason; read from the result for RIPE Atlas).',
  valuesConfig: {
    completed: { description: 'The target answered.' },
    unreach: { description: 'An ICMP destination unreachable ended it (see the last hop\'s errors).' },
    icmp: { description: 'Another ICMP message ended it (scamper).' },
    loop: { description: 'An address came back at a later hop (scamper).' },
    gaplimit: { description: 'Too many silent hops in a row (RIPE Atlas then sends its last probe as hop 255).' },
    error: { description: 'A probe could not be sent (the hop or the trace carries the error).' },
    hoplimit: { description: 'It reached its maximum TTL without reaching the target.' },
    gss: { description: 'It reached an address of the global stop set (scamper doubletree).' },
    halted: { description: 'It was halted (scamper).' },
    none: { description: 'The source gives no reason.' },
  },
});
