import { registerEnumType } from '../../shared/type-graphql.js';

/** The transport a traceroute probed with, as stored in `Trace.protocol` (upper case). */
export enum TraceProtocol {
  ICMP = 'ICMP',
  UDP = 'UDP',
  TCP = 'TCP',
}

registerEnumType(TraceProtocol, { name: 'TraceProtocol', description: 'The protocol of the probe packets.' });
